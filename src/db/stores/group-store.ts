import type { Knex } from 'knex';
import { failedPrecondition, notFound } from '../../core/rpc-error.js';
import { ancestorsOf } from '../../core/uidp.js';
import { GROUP_TYPE, type Group } from '../../resources/groups/group.js';
import type { GroupStore, NewGroup } from '../../resources/groups/group-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { GROUP_CHILD_TABLES } from '../child-tables.js';
import { sqlState } from '../errors.js';
import { keysetPage, whereVisible } from '../keyset.js';
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
    const row = (await kx(tx)('groups').where({ uid }).first(COLUMNS)) as GroupRow | undefined;
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
      if (sqlState(e) === '23503') throw notFound(GROUP_TYPE, g.parentUid ?? '');
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
      return (await k('groups').where({ uid }).del()) > 0;
    } catch (e) {
      if (sqlState(e) === '23503') {
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
    whereVisible(base, sort.uid as string, q.visibility);
    const page = await keysetPage<GroupRow>(base, { sort, uid: sort.uid as string }, q, select);
    return { ...page, items: page.items.map(toGroup) };
  }
}
