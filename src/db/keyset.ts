import type { Knex } from 'knex';
import type { Visibility } from '../core/visibility.js';
import type { PageQuery, SortKey, StorePage } from '../resources/list-types.js';

/** The columns a keyset query orders and seeks on, as SQL identifiers (`g.name`). */
export interface KeysetColumns {
  /** Sort field (as listed in the ListSpec) → column. Must include `uid`. */
  sort: Readonly<Record<string, string>>;
  /** The unique tie-breaker column. */
  uid: string;
}

/** Upper bound of the byte-wise range holding every string that starts with `prefix`. */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** `column` is strictly below `ancestor` in the uid tree: an index range on a C-collated column. */
export function whereBelow(
  qb: Knex.QueryBuilder,
  column: string,
  ancestor: string,
): Knex.QueryBuilder {
  const prefix = ancestor + '/';
  return qb.where(column, '>=', prefix).andWhere(column, '<', prefixEnd(prefix));
}

/** Restrict to what the caller may see: rows at or below one of its scopes. */
export function whereVisible(
  qb: Knex.QueryBuilder,
  column: string,
  vis: Visibility,
): Knex.QueryBuilder {
  if (vis.kind === 'all') return qb;
  if (vis.scopes.length === 0) return qb.whereRaw('false');
  return qb.where((w) => {
    w.whereIn(column, vis.scopes as string[]);
    for (const s of vis.scopes) w.orWhere((r) => whereBelow(r, column, s));
  });
}

function keyValue(v: unknown): string | number | null {
  if (v instanceof Date) return v.toISOString();
  if (v === null || v === undefined) return null;
  return typeof v === 'number' ? v : String(v);
}

/**
 * Run one keyset page over `base` (FROM, joins and filters already applied) and the exact
 * count of the same filter (or `exactCount`, when given). The page is a seek `(k, uid) > (…)` in the requested order,
 * then `skip`, then `pageSize + 1` rows to learn whether another page exists.
 */
export async function keysetPage<R>(
  base: Knex.QueryBuilder,
  cols: KeysetColumns,
  q: PageQuery,
  select: (qb: Knex.QueryBuilder) => Knex.QueryBuilder,
  exactCount?: () => Promise<string | number>,
): Promise<StorePage<R>> {
  const sortCol = cols.sort[q.order.field];
  if (sortCol === undefined) throw new Error(`no column for order field ${q.order.field}`);
  const desc = q.order.direction === 'desc';
  const single = sortCol === cols.uid;

  const page = select(base.clone());
  page.select(base.client.raw('?? as "_k"', [sortCol]));
  if (q.after) {
    const op = desc ? '<' : '>';
    if (single) page.where(cols.uid, op, q.after[q.after.length - 1] as string);
    else
      page.whereRaw(`(??, ??) ${op} (?, ?)`, [
        sortCol,
        cols.uid,
        q.after[0] ?? null,
        q.after[q.after.length - 1] ?? null,
      ]);
  }
  page.orderBy(sortCol, q.order.direction);
  if (!single) page.orderBy(cols.uid, q.order.direction);
  if (q.skip > 0) page.offset(q.skip);
  page.limit(q.pageSize + 1);

  // The count runs beside the page on a second connection, unless the cursor carries it
  // or the caller has a cheaper exact one (a maintained counter).
  const count: Promise<string | number> =
    q.knownTotal !== undefined
      ? Promise.resolve(q.knownTotal)
      : exactCount
        ? exactCount()
        : base
            .clone()
            .clearSelect()
            .clearOrder()
            .count({ n: '*' })
            .then((r) => (r as Array<{ n: string | number }>)[0]?.n ?? 0);

  const [rows, n] = await Promise.all([page, count]);
  return finishPage<R>(rows as Array<R & { _k: unknown; uid: string }>, q.pageSize, single, n);
}

/**
 * Cut a `pageSize + 1` probe to the page and derive the key to continue after: the last
 * row's `_k` (its sort value) and uid, or the uid alone when the order is by uid.
 */
export function finishPage<R>(
  list: Array<R & { _k: unknown; uid: string }>,
  pageSize: number,
  single: boolean,
  total: string | number,
): StorePage<R> {
  const more = list.length > pageSize;
  const items = more ? list.slice(0, pageSize) : list;
  const last = items[items.length - 1];
  let nextKey: SortKey | undefined;
  if (more && last) {
    const uid = last.uid;
    nextKey = single ? [uid] : [keyValue(last._k), uid];
  }
  return { items, ...(nextKey ? { nextKey } : {}), total: String(total) };
}
