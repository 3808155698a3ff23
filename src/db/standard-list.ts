import type { Knex } from 'knex';
import type { PageQuery, StorePage } from '../resources/list-types.js';
import { keysetPage, whereBelow, whereVisible } from './keyset.js';

/**
 * How a table of resources hanging under groups (or under another resource, like tags
 * under repos) answers the list contract. Every such table has `uid` (C-collated),
 * `parent_uid`, and the sort columns; this maps the rest.
 */
export interface StandardListSpec {
  table: string;
  /** Sort field (from the ListSpec) → column of `table`; `uid` is added. */
  sort: Readonly<Record<string, string>>;
  /** Exact-match filter name (from the ListSpec) → column, or a function for richer filters. */
  filters: Readonly<Record<string, string | ((qb: Knex.QueryBuilder, value: string) => void)>>;
  /** Columns to select (joins may be added by `extend`). */
  select: readonly string[];
  /** Add joins or a base condition (e.g. hydrating role bindings in the same query). */
  extend?: (qb: Knex.QueryBuilder) => void;
  /** Widen visibility beyond the caller's scopes (e.g. built-in roles every caller sees). */
  alwaysVisible?: (qb: Knex.QueryBuilder) => void;
}

/**
 * One keyset page of a standard table: `uidp.children_of` is `parent_uid = X`,
 * `uidp.descendants_of` is a uid range strictly below X, both index range scans.
 */
export async function standardList<R>(
  k: Knex | Knex.Transaction,
  spec: StandardListSpec,
  q: PageQuery,
): Promise<StorePage<R>> {
  const t = spec.table;
  const base = k(t);
  spec.extend?.(base);
  if (q.uidp.childrenOf !== undefined) base.where(`${t}.parent_uid`, q.uidp.childrenOf);
  if (q.uidp.descendantsOf !== undefined) whereBelow(base, `${t}.uid`, q.uidp.descendantsOf);
  for (const [name, value] of Object.entries(q.filters)) {
    const f = spec.filters[name];
    if (f === undefined) throw new Error(`filter ${name} has no column`);
    if (typeof f === 'string') base.where(f, value);
    else f(base, value);
  }
  if (spec.alwaysVisible && q.visibility.kind === 'scopes') {
    const always = spec.alwaysVisible;
    base.where((w) => {
      always(w);
      w.orWhere((v) => whereVisible(v, `${t}.uid`, q.visibility));
    });
  } else {
    whereVisible(base, `${t}.uid`, q.visibility);
  }
  const sort: Record<string, string> = { uid: `${t}.uid` };
  for (const [f, col] of Object.entries(spec.sort))
    sort[f] = col.includes('.') ? col : `${t}.${col}`;
  return keysetPage<R>(base, { sort, uid: `${t}.uid` }, q, (qb) =>
    qb.select(spec.select as string[]),
  );
}
