import type { Knex } from 'knex';
import { failedPrecondition, notFound } from '../../core/rpc-error.js';
import { ancestorsOf } from '../../core/uidp.js';
import { topmostScopes, type Visibility } from '../../core/visibility.js';
import { GROUP_TYPE, type Group } from '../../resources/groups/group.js';
import {
  maintainedCount,
  type GroupStore,
  type NewGroup,
} from '../../resources/groups/group-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { GROUP_CHILD_TABLES } from '../child-tables.js';
import { isForeignKeyViolation } from '../errors.js';
import { finishPage, keysetPage, whereVisible } from '../keyset.js';
import { whereNamePrefix } from '../name-prefix.js';
import { Statement } from '../prepared.js';
import { kx } from '../unit-of-work.js';

interface GroupRow {
  uid: string;
  parent_uid: string | null;
  name: string;
  description: string;
  resource_limits: Record<string, number>;
  verified: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'uid',
  'parent_uid',
  'name',
  'description',
  'resource_limits',
  'verified',
  'created_at',
  'updated_at',
];

const GET = new Statement(`SELECT ${COLUMNS.join(', ')} FROM groups WHERE uid = $1`);

/**
 * Add deltas to the maintained counts of several groups in one statement, inserting rows
 * that do not exist yet. The rows are taken in uid order, so concurrent creates and deletes
 * lock shared ancestors (an organization's row above all) in one global order and cannot
 * deadlock on them. Runs last in its transaction: the lock on the root's row is held only
 * until the commit (docs/adr/0003 on the contention this bounds).
 */
const ADD_COUNTS = new Statement(
  `INSERT INTO group_counts (uid, children, descendants)
   SELECT d.uid, d.children, d.descendants
     FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS d(uid, children, descendants)
    ORDER BY d.uid COLLATE "C"
   ON CONFLICT (uid) DO UPDATE
     SET children = group_counts.children + excluded.children,
         descendants = group_counts.descendants + excluded.descendants`,
);

const COUNTS = {
  children: new Statement('SELECT children AS n FROM group_counts WHERE uid = $1'),
  descendants: new Statement('SELECT descendants AS n FROM group_counts WHERE uid = $1'),
};

/**
 * Take one group off its ancestors' counts (its own row goes with it by ON DELETE CASCADE).
 * The ancestors' rows are locked first, in uid order, like ADD_COUNTS takes them.
 */
const REMOVE_COUNTS = new Statement(
  `WITH locked AS MATERIALIZED (
     SELECT uid FROM group_counts WHERE uid = ANY($1::text[]) ORDER BY uid FOR NO KEY UPDATE)
   UPDATE group_counts c
      SET children = c.children - (c.uid = $2)::int, descendants = c.descendants - 1
     FROM locked WHERE c.uid = locked.uid`,
);

/** The counts a new group adds: itself at zero, one descendant to every ancestor, one child to its parent. */
function addedCounts(uid: string): [string[], number[], number[]] {
  const ancestors = ancestorsOf(uid);
  const uids = [...ancestors, uid];
  return [
    uids,
    uids.map((a, i) => (i === 0 && a !== uid ? 1 : 0)),
    uids.map((a) => (a === uid ? 0 : 1)),
  ];
}

function toGroup(r: GroupRow): Group {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    description: r.description,
    resourceLimits: r.resource_limits,
    verified: r.verified,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

export class KnexGroupStore implements GroupStore {
  async get(tx: Tx, uid: string): Promise<Group | undefined> {
    const [row] = await GET.rows<GroupRow>(kx(tx), [uid]);
    return row && toGroup(row);
  }

  async insert(tx: Tx, g: NewGroup): Promise<Group> {
    const k = kx(tx);
    let row: GroupRow;
    try {
      [row] = (await k('groups')
        .insert({ uid: g.uid, parent_uid: g.parentUid, name: g.name, description: g.description })
        .returning(COLUMNS)) as [GroupRow];
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, g.parentUid ?? '');
      throw e;
    }
    const ancestors = ancestorsOf(g.uid);
    if (ancestors.length > 0) {
      await k('group_closure').insert(
        ancestors.map((a, i) => ({
          ancestor_uid: a,
          uid: g.uid,
          depth: i + 1,
          name: row.name,
          created_at: row.created_at,
        })),
      );
    }
    await ADD_COUNTS.rows(k, addedCounts(g.uid));
    return toGroup(row);
  }

  async update(
    tx: Tx,
    uid: string,
    patch: { name?: string; description?: string },
  ): Promise<Group | undefined> {
    const k = kx(tx);
    const [row] = (await k('groups')
      .where({ uid })
      .update({ ...patch, updated_at: k.fn.now() })
      .returning(COLUMNS)) as GroupRow[];
    if (!row) return undefined;
    if (patch.name !== undefined) {
      await k('group_closure')
        .where({ uid })
        .whereNot({ name: row.name })
        .update({ name: row.name });
    }
    return toGroup(row);
  }

  async childKinds(tx: Tx, uid: string): Promise<string[]> {
    const k = kx(tx);
    const probes = GROUP_CHILD_TABLES.map(({ table, kind, column }) =>
      k
        .raw('SELECT ?::text AS kind WHERE EXISTS (SELECT 1 FROM ?? WHERE ?? = ?)', [
          kind,
          table,
          column ?? 'parent_uid',
          uid,
        ])
        .toQuery(),
    );
    const res = (await k.raw(probes.join(' UNION ALL '))) as { rows: Array<{ kind: string }> };
    return res.rows.map((r) => r.kind);
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    const k = kx(tx);
    // Lock the group so a child created concurrently either lands first (and is seen
    // below) or fails its foreign key after we are gone.
    const locked = await k('groups').where({ uid }).forUpdate().first('uid');
    if (!locked) return false;
    const kinds = await this.childKinds(tx, uid);
    if (kinds.length > 0) {
      throw failedPrecondition(
        'RESOURCE_NOT_EMPTY',
        `cannot delete group with child ${kinds.join(', ')}`,
        uid,
      );
    }
    try {
      if ((await k('groups').where({ uid }).del()) === 0) return false;
      // The group's own counts went with it (ON DELETE CASCADE); its ancestors lose one.
      const ancestors = ancestorsOf(uid);
      if (ancestors.length > 0) await REMOVE_COUNTS.rows(k, [ancestors, ancestors[0]]);
      return true;
    } catch (e) {
      if (isForeignKeyViolation(e)) {
        throw failedPrecondition(
          'RESOURCE_NOT_EMPTY',
          'cannot delete group with child resources',
          uid,
        );
      }
      throw e;
    }
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<Group>> {
    const k = kx(tx);
    const anchored = maintainedCount(q);
    if (anchored && q.skip === 0) return this.#anchoredPage(k, q, anchored);
    const { descendantsOf, childrenOf } = q.uidp;
    let base: Knex.QueryBuilder;
    let sort: Record<string, string>;
    let select: (qb: Knex.QueryBuilder) => Knex.QueryBuilder;
    const columns = COLUMNS.map((c) => `g.${c}`);
    if (descendantsOf !== undefined) {
      // The closure holds the sort columns, so both the seek and the count are index-only
      // scans of group_closure; groups is joined for the page's rows alone.
      base = k('group_closure as c').where('c.ancestor_uid', descendantsOf);
      sort = { uid: 'c.uid', name: 'c.name', created_at: 'c.created_at' };
      if (childrenOf !== undefined) {
        base.whereExists((e) =>
          e
            .select(k.raw('1'))
            .from('groups as p')
            .whereRaw('p.uid = c.uid')
            .where('p.parent_uid', childrenOf),
        );
      }
      select = (qb) => qb.join('groups as g', 'g.uid', 'c.uid').select(columns);
    } else {
      base = k('groups as g');
      sort = { uid: 'g.uid', name: 'g.name', created_at: 'g.created_at' };
      if (childrenOf !== undefined) base.where('g.parent_uid', childrenOf);
      select = (qb) => qb.select(columns);
    }
    if (q.filters.name !== undefined) base.where(sort.name as string, q.filters.name);
    if (q.filters.name_prefix !== undefined)
      whereNamePrefix(base, sort.name as string, q.filters.name_prefix);
    if (q.filters.top_level !== undefined)
      whereTopLevel(base, q.filters.top_level === 'true', q.visibility, {
        uid: sort.uid as string,
        parent: descendantsOf === undefined ? 'g.parent_uid' : undefined,
      });
    whereVisible(base, sort.uid as string, q.visibility);
    const counted = maintainedCount(q);
    const page = await keysetPage<GroupRow>(
      base,
      { sort, uid: sort.uid as string },
      q,
      select,
      counted && (() => readCount(k, counted, anchorOf(q))),
    );
    return { ...page, items: page.items.map(toGroup) };
  }

  /**
   * Everything directly or anywhere below one anchor, visible whole, no filter: the hot
   * lists. The page is one of a few fixed statements (prepared once per connection on
   * PostgreSQL) and the total is the maintained counter, both in parallel.
   */
  async #anchoredPage(
    k: Knex | Knex.Transaction,
    q: PageQuery,
    counted: 'children' | 'descendants',
  ): Promise<StorePage<Group>> {
    const anchor = anchorOf(q);
    const stmt = pageStatement(counted, q.order.field, q.order.direction === 'desc', !!q.after);
    const values: unknown[] = [anchor];
    if (q.after) {
      if (q.order.field !== 'uid') values.push(q.after[0] ?? null);
      values.push(q.after[q.after.length - 1] ?? null);
    }
    values.push(q.pageSize + 1);
    const [rows, total] = await Promise.all([
      stmt.rows<GroupRow & { _k: unknown }>(k, values),
      q.knownTotal ?? readCount(k, counted, anchor),
    ]);
    const page = finishPage(rows, q.pageSize, q.order.field === 'uid', total);
    return { ...page, items: page.items.map(toGroup) };
  }
}

/**
 * `top_level`: the groups the caller sees whose parent it does not see (`top`), or the
 * others. Seeing all, those are the roots; seeing scopes, the topmost of the scopes (a
 * group is visible when it is a scope or below one), so a caller who sees a folder but not
 * its organization is answered the folder and learns nothing of what is above it. Only
 * the caller's own scopes go into the query, each a bound parameter; the visibility filter
 * itself still applies on top. `parent` is absent where the rows are a closure's, all
 * strictly below an anchor: none of them is a root.
 */
function whereTopLevel(
  qb: Knex.QueryBuilder,
  top: boolean,
  vis: Visibility,
  cols: { uid: string; parent: string | undefined },
): void {
  if (vis.kind === 'all') {
    if (cols.parent === undefined) {
      if (top) qb.whereRaw('false');
    } else if (top) qb.whereNull(cols.parent);
    else qb.whereNotNull(cols.parent);
    return;
  }
  const tops = topmostScopes(vis.scopes);
  if (top) {
    if (tops.length === 0) qb.whereRaw('false');
    else qb.whereIn(cols.uid, tops);
  } else if (tops.length > 0) qb.whereNotIn(cols.uid, tops);
}

function anchorOf(q: PageQuery): string {
  return (q.uidp.descendantsOf ?? q.uidp.childrenOf) as string;
}

/** A group that does not exist has no row, and nothing below it. */
async function readCount(
  k: Knex | Knex.Transaction,
  which: 'children' | 'descendants',
  uid: string,
): Promise<string> {
  const [row] = await COUNTS[which].rows<{ n: string | number }>(k, [uid]);
  return String(row?.n ?? 0);
}

const PAGES = new Map<string, Statement>();

/**
 * The page statement of an anchored list, built from a template once per shape (anchor
 * kind, order, direction, first page or seek) and kept: at most 24 statements. The
 * closure carries the sort columns, so the seek of `descendants_of` is an index scan of
 * `group_closure` in order; `children_of` seeks `groups_parent_*` the same way.
 */
function pageStatement(
  counted: 'children' | 'descendants',
  field: string,
  desc: boolean,
  seek: boolean,
): Statement {
  const key = `${counted}|${field}|${desc}|${seek}`;
  let stmt = PAGES.get(key);
  if (stmt) return stmt;
  const t = counted === 'descendants' ? 'c' : 'g';
  const col = { uid: 'uid', name: 'name', created_at: 'created_at' }[field];
  if (col === undefined) throw new Error(`no column for order field ${field}`);
  const from =
    counted === 'descendants'
      ? 'group_closure c JOIN groups g ON g.uid = c.uid WHERE c.ancestor_uid = $1'
      : 'groups g WHERE g.parent_uid = $1';
  const dir = desc ? 'DESC' : 'ASC';
  const op = desc ? '<' : '>';
  const single = col === 'uid';
  let where = '';
  let n = 2;
  if (seek)
    where = single
      ? ` AND ${t}.uid ${op} $${n++}`
      : ` AND (${t}.${col}, ${t}.uid) ${op} ($${n++}, $${n++})`;
  const order = single ? `${t}.uid ${dir}` : `${t}.${col} ${dir}, ${t}.uid ${dir}`;
  stmt = new Statement(
    `SELECT ${COLUMNS.map((c) => `g.${c}`).join(', ')}, ${t}.${col} AS "_k" FROM ${from}${where} ORDER BY ${order} LIMIT $${n}`,
  );
  PAGES.set(key, stmt);
  return stmt;
}
