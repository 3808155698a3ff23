import type { Direction } from '../core/order-by.js';
import type { UidpFilter } from '../core/list-request.js';
import type { Visibility } from '../core/visibility.js';

export type SortKey = (string | number | null)[];

/** One page of one query, as a store is asked for it. */
export interface PageQuery {
  uidp: UidpFilter;
  filters: Readonly<Record<string, string>>;
  order: { field: string; direction: Direction };
  /** Sort key of the last row of the previous page; absent on the first page. */
  after?: SortKey;
  skip: number;
  pageSize: number;
  visibility: Visibility;
  /** The total counted on the first page of this cursor chain; the store need not count. */
  knownTotal?: string;
}

/** What a store answers: the rows, the key to continue after, and the exact total. */
export interface StorePage<T> {
  items: T[];
  nextKey?: SortKey;
  total: string;
  /**
   * When the total may change with no write (epoch ms): who-can's count lapses when the
   * first of the bindings it counted expires. A shared count is not reused past it.
   */
  totalUntil?: number;
}

/** The List response every resource shares. */
export interface ListPage<T> {
  items: T[];
  nextPageToken?: string;
  totalCount: string;
  skipped: number;
}
