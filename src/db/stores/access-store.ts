import type { Capability } from '../../auth/capabilities.js';
import { ancestryOf } from '../../core/uidp.js';
import type { AccessStore, BindingGrant } from '../../resources/access/access-store.js';
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

  /** The ancestry is at most the tree's depth: an index seek on `parent_uid` per level. */
  bindingsGranting(tx: Tx, groupUid: string, cap: Capability): Promise<BindingGrant[]> {
    const groups = ancestryOf(groupUid);
    return rows(
      tx,
      `${SELECT} WHERE rb.parent_uid IN (${groups.map(() => '?').join(', ')})
          AND r.capabilities @> ?::jsonb AND ${LIVE}
        ORDER BY rb.identity_uid, rb.uid`,
      [...groups, JSON.stringify([cap])],
    );
  }
}
