import type { ListPage } from '../../resources/list-types.js';

/**
 * A page as the v2 List envelope (spec §2): the plural key, `nextPageToken` only when there
 * is a next page, `totalCount`, `skipped`, in that order (answers stay byte-identical).
 */
export function listAnswer<T>(
  plural: string,
  page: ListPage<T>,
  toWire: (item: T) => unknown,
): Record<string, unknown> {
  return {
    [plural]: page.items.map(toWire),
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    totalCount: page.totalCount,
    skipped: page.skipped,
  };
}
