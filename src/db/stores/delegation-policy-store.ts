import type { Capability } from '../../auth/capabilities.js';
import { notFound } from '../../core/rpc-error.js';
import type { DelegationPolicy } from '../../resources/delegation/delegation-policy.js';
import type { DelegationPolicyStore } from '../../resources/delegation/delegation-policy-store.js';
import { IDENTITY_TYPE } from '../../resources/identities/identity.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation } from '../errors.js';
import { kx } from '../unit-of-work.js';

const T = 'delegation_policies';

interface Row {
  identity_uid: string;
  actors: string[] | string;
  capabilities: string[] | string;
  max_lifetime_seconds: number;
  set_by: string;
  updated_at: Date;
}

/** jsonb arrives parsed from node-postgres, and may arrive as text elsewhere. */
const list = (v: string[] | string): string[] =>
  typeof v === 'string' ? (JSON.parse(v) as string[]) : v;

export class KnexDelegationPolicyStore implements DelegationPolicyStore {
  async get(tx: Tx, identityUid: string): Promise<DelegationPolicy | undefined> {
    const r = (await kx(tx)(T).where({ identity_uid: identityUid }).first()) as Row | undefined;
    return (
      r && {
        identityUid: r.identity_uid,
        actors: list(r.actors),
        capabilities: list(r.capabilities) as Capability[],
        maxLifetimeSeconds: r.max_lifetime_seconds,
        setBy: r.set_by,
        updateTime: new Date(r.updated_at),
      }
    );
  }

  async set(tx: Tx, p: DelegationPolicy): Promise<void> {
    const k = kx(tx);
    const row = {
      identity_uid: p.identityUid,
      actors: JSON.stringify(p.actors),
      capabilities: JSON.stringify(p.capabilities),
      max_lifetime_seconds: p.maxLifetimeSeconds,
      set_by: p.setBy,
      updated_at: p.updateTime,
    };
    try {
      await k(T).insert(row).onConflict('identity_uid').merge(row);
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(IDENTITY_TYPE, p.identityUid);
      throw e;
    }
  }

  async delete(tx: Tx, identityUid: string): Promise<boolean> {
    return (await kx(tx)(T).where({ identity_uid: identityUid }).delete()) > 0;
  }
}
