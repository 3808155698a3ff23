import type { PageQuery, StorePage } from '../list-types.js';

/**
 * One keyset page of an answer computed whole in memory (access lists: derived from the
 * bindings, not rows of a table), sorted by a unique string key, so the standard pager
 * seals and checks its cursors exactly as for a table.
 */
export function pageInMemory<T>(
  all: readonly T[],
  keyOf: (item: T) => string,
  q: PageQuery,
): StorePage<T> {
  const asc = q.order.direction !== 'desc';
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0) * (asc ? 1 : -1);
  const items = [...all].sort((a, b) => cmp(keyOf(a), keyOf(b)));
  const after = q.after?.[q.after.length - 1];
  const rest = typeof after === 'string' ? items.filter((i) => cmp(keyOf(i), after) > 0) : items;
  const page = rest.slice(q.skip, q.skip + q.pageSize);
  const last = page[page.length - 1];
  const more = rest.length > q.skip + q.pageSize;
  return {
    items: page,
    ...(more && last !== undefined ? { nextKey: [keyOf(last)] } : {}),
    total: String(all.length),
  };
}
