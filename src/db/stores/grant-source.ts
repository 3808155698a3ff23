import type { Grant, GrantSource } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Tx, UnitOfWork } from '../../resources/tx.js';
import { Statement } from '../prepared.js';
import { kx } from '../unit-of-work.js';
import { storedCapabilities } from './role-store.js';

/** Runs whenever an identity's grants are not remembered: a fixed, prepared statement. */
const GRANTS = new Statement(
  `SELECT rb.parent_uid AS scope, r.capabilities
     FROM role_bindings rb JOIN roles r ON r.uid = rb.role_uid
    WHERE rb.identity_uid = $1`,
);

/**
 * What an identity holds: one query over its role bindings joined to their roles, one
 * grant per group it is bound at (several roles at one group are merged).
 */
export class KnexGrantSource implements GrantSource {
  constructor(private readonly uow: UnitOfWork) {}

  grantsOf(identityUid: string): Promise<Grant[]> {
    return this.uow.read((tx) => grantsOfIdentity(tx, identityUid));
  }
}

/**
 * The grants an identity's role bindings give it, read in `tx` (so a caller holding the
 * identity's row lock sees a set no concurrent binding can change before it commits).
 */
export async function grantsOfIdentity(tx: Tx, identityUid: string): Promise<Grant[]> {
  const rows = await GRANTS.rows<{ scope: string; capabilities: unknown }>(kx(tx), [identityUid]);
  const byScope = new Map<string, Set<Capability>>();
  for (const row of rows) {
    const caps = byScope.get(row.scope) ?? new Set<Capability>();
    for (const c of storedCapabilities(row.capabilities)) caps.add(c);
    byScope.set(row.scope, caps);
  }
  return [...byScope].map(([scope, capabilities]) => ({ scope, capabilities }));
}
