import type { Visibility } from '../../core/visibility.js';
import type { NamesFound, NamesWanted, NameStore } from '../../resources/names/name-store.js';
import type { Tx } from '../../resources/tx.js';
import { whereVisible } from '../keyset.js';
import { Statement } from '../prepared.js';
import { kx } from '../unit-of-work.js';

/**
 * A path of names walked down the tree in one statement: each step is a seek on
 * `groups_parent_name (parent_uid, name, uid)` from the uids the step before found.
 * Where the walk starts is the only visibility condition it needs: everything below a
 * group the caller sees is visible too. A hidden or missing name ends the walk the same
 * way, with no row, and a hidden group's name is never compared at all when the caller
 * has scopes (the first step reads only the scope groups' own rows).
 */
function walk(start: string, limitParam: string): Statement {
  return new Statement(
    `WITH RECURSIVE arg AS (SELECT $1::text[] AS names),
     walk (uid, depth) AS (
       SELECT g.uid, 1 FROM arg CROSS JOIN groups g WHERE ${start} AND g.name = arg.names[1]
       UNION ALL
       SELECT g.uid, w.depth + 1
         FROM walk w CROSS JOIN arg
         JOIN groups g ON g.parent_uid = w.uid AND g.name = arg.names[w.depth + 1]
        WHERE w.depth < cardinality(arg.names)
     )
     SELECT walk.uid FROM walk CROSS JOIN arg
      WHERE walk.depth = cardinality(arg.names)
      ORDER BY walk.uid LIMIT ${limitParam}`,
  );
}

/** From the organizations (a caller who sees everything). */
const FROM_ROOTS = walk('g.parent_uid IS NULL', '$2');
/** From the caller's scope groups, whose parents it cannot see. */
const FROM_SCOPES = walk('g.uid = ANY($2::text[])', '$3');

/** Names by uid of three kinds at once: one round trip for a page's paths. */
const NAMES_OF = new Statement(
  `SELECT 'g' AS kind, uid, name FROM groups WHERE uid = ANY($1::text[])
   UNION ALL SELECT 'i', uid, name FROM identities WHERE uid = ANY($2::text[])
   UNION ALL SELECT 'r', uid, name FROM roles WHERE uid = ANY($3::text[])`,
);

export class KnexNameStore implements NameStore {
  async namesOf(tx: Tx, uids: NamesWanted): Promise<NamesFound> {
    const found: NamesFound = { groups: new Map(), identities: new Map(), roles: new Map() };
    const rows = await NAMES_OF.rows<{ kind: string; uid: string; name: string }>(kx(tx), [
      uids.groups,
      uids.identities,
      uids.roles,
    ]);
    const into = { g: found.groups, i: found.identities, r: found.roles } as const;
    for (const r of rows) into[r.kind as keyof typeof into].set(r.uid, r.name);
    return found;
  }

  async groupsAt(
    tx: Tx,
    path: readonly string[],
    groups: Visibility,
    limit: number,
  ): Promise<string[]> {
    const k = kx(tx);
    const rows =
      groups.kind === 'all'
        ? await FROM_ROOTS.rows<{ uid: string }>(k, [path, limit])
        : groups.scopes.length === 0
          ? []
          : await FROM_SCOPES.rows<{ uid: string }>(k, [path, groups.scopes, limit]);
    return rows.map((r) => r.uid);
  }

  async identitiesNamed(
    tx: Tx,
    parents: readonly string[] | null,
    name: string,
    visibility: Visibility,
    limit: number,
  ): Promise<string[]> {
    const q = kx(tx)('identities').where('name', name);
    if (parents === null) q.whereNull('parent_uid');
    else q.whereIn('parent_uid', parents as string[]);
    whereVisible(q, 'uid', visibility);
    const rows = (await q.orderBy('uid').limit(limit).select('uid')) as { uid: string }[];
    return rows.map((r) => r.uid);
  }

  async rolesNamed(
    tx: Tx,
    where: { parents?: readonly string[]; builtIns: boolean },
    name: string,
    visibility: Visibility,
    limit: number,
  ): Promise<{ uid: string; parentUid: string | null }[]> {
    const q = kx(tx)('roles')
      .where('name', name)
      .where((w) => {
        // Built-ins have no parent and every caller sees them; custom roles as listed.
        if (where.builtIns) w.whereNull('parent_uid');
        w.orWhere((c) => {
          c.whereNotNull('parent_uid');
          if (where.parents) c.whereIn('parent_uid', where.parents as string[]);
          whereVisible(c, 'uid', visibility);
        });
      });
    const rows = (await q.orderBy('uid').limit(limit).select('uid', 'parent_uid')) as {
      uid: string;
      parent_uid: string | null;
    }[];
    return rows.map((r) => ({ uid: r.uid, parentUid: r.parent_uid }));
  }
}
