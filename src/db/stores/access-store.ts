import type { Capability } from '../../auth/capabilities.js';
import { ancestryOf } from '../../core/uidp.js';
import type { Knex } from 'knex';
import type { AccessStore, BindingGrant, SeenBy } from '../../resources/access/access-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import { whereVisible } from '../keyset.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';
import { storedCapabilities } from './role-store.js';

interface Row {
  uid: string;
  parent_uid: string;
  identity_uid: string;
  role_uid: string;
  role_name: string;
  role_description: string;
  capabilities: unknown;
}

/** A binding grants from creation until its expiry (exclusive); NULL never expires. */
const LIVE = '(rb.expire_time IS NULL OR rb.expire_time > now())';

const SELECT = `SELECT rb.uid, rb.parent_uid, rb.identity_uid, rb.role_uid,
                       r.name AS role_name, r.description AS role_description, r.capabilities
                  FROM role_bindings rb JOIN roles r ON r.uid = rb.role_uid`;

function toGrant(r: Row): BindingGrant {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    identityUid: r.identity_uid,
    role: { uid: r.role_uid, name: r.role_name, description: r.role_description },
    capabilities: storedCapabilities(r.capabilities),
  };
}

async function rows(tx: Tx, sql: string, params: string[]): Promise<BindingGrant[]> {
  const res = (await kx(tx).raw(sql, params)) as { rows: Row[] };
  return res.rows.map(toGrant);
}

export class KnexAccessStore implements AccessStore {
  async identityExists(tx: Tx, uid: string): Promise<boolean> {
    return (await kx(tx)('identities').where({ uid }).first('uid')) !== undefined;
  }

  async existingGroups(tx: Tx, uids: readonly string[]): Promise<Set<string>> {
    if (uids.length === 0) return new Set();
    const found = (await kx(tx)('groups')
      .whereIn('uid', [...uids])
      .select('uid')) as {
      uid: string;
    }[];
    return new Set(found.map((r) => r.uid));
  }

  bindingsOf(tx: Tx, identityUid: string): Promise<BindingGrant[]> {
    return rows(tx, `${SELECT} WHERE rb.identity_uid = ? AND ${LIVE} ORDER BY rb.uid`, [
      identityUid,
    ]);
  }

  /**
   * A keyset over the distinct identities of the bindings on the asked group's ancestry
   * (at most the tree's depth of `parent_uid` index seeks), filtered in SQL by what the
   * caller may see: the first page never materialises the bindings behind later ones.
   */
  async holdersPage(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    q: PageQuery,
  ): Promise<StorePage<string>> {
    const desc = q.order.direction === 'desc';
    const page = granting(tx, groupUid, cap, seen).distinct('rb.identity_uid');
    const after = q.after?.[q.after.length - 1];
    if (typeof after === 'string') page.where('rb.identity_uid', desc ? '<' : '>', after);
    page.orderBy('rb.identity_uid', desc ? 'desc' : 'asc').limit(q.pageSize + 1);
    if (q.skip > 0) page.offset(q.skip);
    const count = async () => {
      const row = (await granting(tx, groupUid, cap, seen)
        .countDistinct({ n: 'rb.identity_uid' })
        .first()) as { n: string | number } | undefined;
      return String(row?.n ?? 0);
    };
    const [rows, total] = await Promise.all([
      page as Promise<{ identity_uid: string }[]>,
      q.knownTotal === undefined ? count() : Promise.resolve(q.knownTotal),
    ]);
    const items = rows.slice(0, q.pageSize).map((r) => r.identity_uid);
    const last = items[items.length - 1];
    return {
      items,
      ...(rows.length > q.pageSize && last !== undefined ? { nextKey: [last] } : {}),
      total,
    };
  }

  async bindingsGranting(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    identityUids: readonly string[],
  ): Promise<BindingGrant[]> {
    if (identityUids.length === 0) return [];
    const found = (await granting(tx, groupUid, cap, seen)
      .whereIn('rb.identity_uid', [...identityUids])
      .select(
        'rb.uid',
        'rb.parent_uid',
        'rb.identity_uid',
        'rb.role_uid',
        'r.name as role_name',
        'r.description as role_description',
        'r.capabilities',
      )
      .orderBy([
        { column: 'rb.identity_uid', order: 'asc' },
        { column: 'rb.uid', order: 'asc' },
      ])) as Row[];
    return found.map(toGrant);
  }
}

/**
 * Live bindings at `groupUid` or above whose role holds `cap`, that count for the caller:
 * its own, or where it may list role bindings, of identities it may list (or itself).
 */
function granting(tx: Tx, groupUid: string, cap: Capability, seen: SeenBy): Knex.QueryBuilder {
  const self = seen.self;
  const either = (column: string, vis: SeenBy['bindings']) => (w: Knex.QueryBuilder) => {
    if (self !== undefined)
      w.where('rb.identity_uid', self).orWhere((v) => whereVisible(v, column, vis));
    else whereVisible(w, column, vis);
  };
  const q = kx(tx)('role_bindings as rb')
    .join('roles as r', 'r.uid', 'rb.role_uid')
    .whereIn('rb.parent_uid', ancestryOf(groupUid))
    .whereRaw('r.capabilities @> ?::jsonb', [JSON.stringify([cap])])
    .whereRaw(LIVE);
  if (seen.bindings.kind !== 'all') q.where(either('rb.uid', seen.bindings));
  if (seen.identities.kind !== 'all') q.where(either('rb.identity_uid', seen.identities));
  return q;
}
