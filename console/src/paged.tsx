import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Page } from './api';
import { ErrorBox, Pager, useLoad, type Loaded } from './ui';

/** How many rows a page of a list in the console holds. */
export const PAGE_SIZE = 50;

/** One page of a list, as useLoad loads it, and the page tokens that led to it. */
export interface Paged<T> extends Loaded<Page<T>> {
  /** The page tokens that led to the page shown (empty on the first), as Pager takes them. */
  tokens: string[];
  setTokens: (t: string[]) => void;
}

/**
 * Loads a list a page at a time: `load` is given the page's size and token (none on the
 * first page) to pass to the List call, and runs again when `deps` change or the page does.
 */
export function usePaged<T>(
  load: (page: { page_size: number; page_token: string | undefined }) => Promise<Page<T>>,
  deps: unknown[],
): Paged<T> {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  const page = useLoad(() => load({ page_size: PAGE_SIZE, page_token: token }), [...deps, token]);
  return { ...page, tokens, setTokens };
}

/**
 * A paged list's frame: the List call's refusal (and any `alerts` of the caller's), then,
 * once a page is in, its count (`role="status"` where `announce`, for a search's answer),
 * the rows (`children`, only when the page has any) and Back/More; "Loading…" meanwhile.
 */
export function PagedList<T>(props: {
  paged: Paged<T>;
  count: (page: Page<T>) => ComponentChildren;
  announce?: boolean;
  alerts?: ComponentChildren;
  children: (page: Page<T>) => ComponentChildren;
}) {
  const { paged } = props;
  const page = paged.data;
  return (
    <>
      <ErrorBox error={paged.error} />
      {props.alerts}
      {page ? (
        <>
          <p class="count" role={props.announce ? 'status' : undefined}>
            {props.count(page)}
          </p>
          {page.items.length > 0 ? props.children(page) : null}
          <Pager tokens={paged.tokens} setTokens={paged.setTokens} next={page.nextPageToken} />
        </>
      ) : paged.loading ? (
        <p role="status">Loading…</p>
      ) : null}
    </>
  );
}

/** A table of rows under a heading (`labelledBy`), a column header each in `headers`. */
export function RowsTable(props: {
  labelledBy: string;
  headers: string[];
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <table class={props.class ?? 'rows'} aria-labelledby={props.labelledBy}>
      <thead>
        <tr>
          {props.headers.map((h) => (
            <th scope="col" key={h}>
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}
