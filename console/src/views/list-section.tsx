import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { del, listPage } from '../api';
import { useCan } from '../can';
import { plural } from '../model';
import { PagedList, RowsTable, usePaged } from '../paged';
import { ConfirmDialog, ErrorBox, Section } from '../ui';
import { ReviewDialog, type AccessChange } from './access-delta';

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
}

export interface ListSectionProps<T> {
  id: string;
  title: string;
  path: string;
  plural: string;
  /** The row's noun, singular and plural: "1 role binding", "you cannot list role bindings". */
  noun: [string, string];
  /** The capabilities to list and to delete rows here (the page's batch check answers). */
  listCap: string;
  deleteCap: string;
  query: Record<string, string>;
  columns: Column<T>[];
  /** What a row is called in its delete button's label and its confirmation. */
  label: (row: T) => string;
  /** What goes with a row when it is deleted, as " and its 2 role bindings" ("" for nothing). */
  consequence?: (row: T) => Promise<string>;
  /**
   * The access change deleting a row makes (a role binding, an identity): its confirmation
   * then shows what the server says that does to access before the confirm button.
   */
  review?: (row: T) => AccessChange[];
  /** After a delete: for what went with the row elsewhere (an identity's role bindings). */
  onDeleted?: () => void;
  version?: number;
  children?: ComponentChildren;
}

/**
 * One kind of thing under a group: its first page (and the next ones on request) with the
 * total, a delete button per row when the caller may delete (each asks first), and
 * whatever create form the caller passes in. A list the caller may not read says so
 * instead of showing an empty list.
 */
export function ListSection<T extends { uid: string }>(props: ListSectionProps<T>) {
  const can = useCan();
  const readable = can(props.listCap);
  return (
    <Section id={props.id} title={props.title}>
      {readable ? (
        <Rows {...props} deletable={can(props.deleteCap)} />
      ) : (
        <p class="count cannot">You cannot list {props.noun[1]} here.</p>
      )}
      {props.children}
    </Section>
  );
}

function Rows<T extends { uid: string }>(props: ListSectionProps<T> & { deletable: boolean }) {
  const [again, setAgain] = useState(0);
  const [doomed, setDoomed] = useState<{ row: T; goes: string } | undefined>(undefined);
  const [probeError, setProbeError] = useState<unknown>(undefined);
  const page = usePaged<T>(
    (p) => listPage(props.path, props.plural, { ...props.query, ...p }),
    [props.path, JSON.stringify(props.query), again, props.version],
  );
  const ask = (row: T) => {
    setProbeError(undefined);
    (props.consequence ?? (() => Promise.resolve('')))(row).then(
      (goes) => setDoomed({ row, goes }),
      (e: unknown) => setProbeError(e),
    );
  };
  return (
    <>
      <PagedList
        paged={page}
        alerts={<ErrorBox error={probeError} />}
        count={(d) => (
          <>
            {plural(d.totalCount, props.noun[0], props.noun[1])}
            {d.totalCount === '0' ? '' : ' in all'}
          </>
        )}
      >
        {(d) => <RowTable {...props} rows={d.items} onDelete={ask} />}
      </PagedList>
      {doomed ? (
        <DeleteDialog
          title={`Delete ${props.label(doomed.row)}?`}
          changes={props.review?.(doomed.row)}
          onClose={() => setDoomed(undefined)}
          onConfirm={async () => {
            await del(`${props.path}/${doomed.row.uid}`);
            setDoomed(undefined);
            setAgain((a) => a + 1);
            props.onDeleted?.();
            // The button pressed is gone with its row: the focus goes to the list's heading,
            // once the modal dialog (which holds the focus while open) is gone.
            setTimeout(() => document.getElementById(props.id)?.focus(), 0);
          }}
        >
          This deletes {props.label(doomed.row)}
          {doomed.goes}. It cannot be undone.
        </DeleteDialog>
      ) : null}
    </>
  );
}

/** The delete confirmation, with the access delta when the delete changes access. */
function DeleteDialog(props: {
  title: string;
  changes: AccessChange[] | undefined;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const { changes, ...rest } = props;
  return changes ? (
    <ReviewDialog {...rest} confirm="Yes, delete" changes={changes} />
  ) : (
    <ConfirmDialog {...rest} confirm="Yes, delete" />
  );
}

function RowTable<T extends { uid: string }>(
  props: ListSectionProps<T> & { deletable: boolean; rows: T[]; onDelete: (row: T) => void },
) {
  return (
    <RowsTable
      labelledBy={props.id}
      headers={[...props.columns.map((c) => c.header), ...(props.deletable ? ['Actions'] : [])]}
    >
      {props.rows.map((row) => (
        <tr key={row.uid} data-uid={row.uid}>
          {props.columns.map((c) => (
            <td key={c.header}>{c.cell(row)}</td>
          ))}
          {props.deletable ? (
            <td>
              <button
                type="button"
                class="danger"
                aria-label={`Delete ${props.label(row)}`}
                onClick={() => props.onDelete(row)}
              >
                Delete
              </button>
            </td>
          ) : null}
        </tr>
      ))}
    </RowsTable>
  );
}
