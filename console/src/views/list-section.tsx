import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { del, listPage, type Page } from '../api';
import { ErrorBox, Pager, Section, useAction, useLoad } from '../ui';

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
}

/**
 * One kind of thing under a group: its first page (and the next ones on request) with the
 * total, a delete button per row, and whatever create form the caller passes in.
 */
export function ListSection<T extends { uid: string }>(props: {
  id: string;
  title: string;
  path: string;
  plural: string;
  query: Record<string, string>;
  columns: Column<T>[];
  /** What a row is called in its delete button's label. */
  label: (row: T) => string;
  canDelete?: boolean;
  /** After a delete: for what went with the row elsewhere (an identity's role bindings). */
  onDeleted?: () => void;
  version?: number;
  children?: ComponentChildren;
}) {
  const [tokens, setTokens] = useState<string[]>([]);
  const [deleted, setDeleted] = useState(0);
  const token = tokens[tokens.length - 1];
  const page = useLoad<Page<T>>(
    () =>
      listPage<T>(props.path, props.plural, { ...props.query, page_size: 50, page_token: token }),
    [props.path, JSON.stringify(props.query), token, deleted, props.version],
  );
  const act = useAction();
  return (
    <Section id={props.id} title={props.title}>
      <ErrorBox error={page.error} />
      <ErrorBox error={act.error} />
      {page.data ? (
        <>
          <p class="count">{page.data.totalCount} in all</p>
          {page.data.items.length > 0 ? (
            <table class="rows" aria-labelledby={props.id}>
              <thead>
                <tr>
                  {props.columns.map((c) => (
                    <th scope="col" key={c.header}>
                      {c.header}
                    </th>
                  ))}
                  {props.canDelete === false ? null : <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {page.data.items.map((row) => (
                  <tr key={row.uid} data-uid={row.uid}>
                    {props.columns.map((c) => (
                      <td key={c.header}>{c.cell(row)}</td>
                    ))}
                    {props.canDelete === false ? null : (
                      <td>
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Delete ${props.label(row)}`}
                          disabled={act.busy}
                          onClick={() =>
                            void act.run(async () => {
                              await del(`${props.path}/${row.uid}`);
                              setDeleted((d) => d + 1);
                              props.onDeleted?.();
                            })
                          }
                        >
                          Delete
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <Pager tokens={tokens} setTokens={setTokens} next={page.data.nextPageToken} />
        </>
      ) : null}
      {props.children}
    </Section>
  );
}
