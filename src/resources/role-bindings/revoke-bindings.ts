import type { Principal } from '../../auth/principal.js';
import type { ChangeCause } from '../audit/audit-event.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { Tx } from '../tx.js';
import { ROLE_BINDING_TYPE, type RoleBinding } from './role-binding.js';
import type { RoleBindingStore } from './role-binding-store.js';

interface Revoker {
  bindings: Pick<RoleBindingStore, 'deleteAll'>;
  audit?: ChangeRecorder;
}

/** Rows per DELETE: far below PostgreSQL's 65,535 parameters, and a short lock list. */
const CHUNK = 500;

/**
 * The one way a role binding leaves the database, whatever removes it (a direct delete,
 * its identity's delete, the expiry sweeper, the reconciler through those services): each
 * binding that is gone is its own `role_binding.deleted` record and event, with the shape
 * of a direct delete and, when something else carried it away, that `cause`. All in `tx`,
 * so a delete that rolls back leaves no record and a record never outlives its delete.
 *
 * `bindings` are their last state, read in `tx`. A binding another transaction deleted
 * meanwhile is not recorded twice: only the rows this call removed are recorded.
 * @returns the bindings this call deleted, in the order given.
 * @throws whatever the store or the recorder throws; the caller's transaction then rolls back.
 */
export async function revokeBindings(
  tx: Tx,
  d: Revoker,
  p: Principal,
  bindings: readonly RoleBinding[],
  cause?: ChangeCause,
): Promise<RoleBinding[]> {
  const gone = new Set<string>();
  for (let i = 0; i < bindings.length; i += CHUNK) {
    const uids = bindings.slice(i, i + CHUNK).map((b) => b.uid);
    for (const uid of await d.bindings.deleteAll(tx, uids)) gone.add(uid);
  }
  const revoked = bindings.filter((b) => gone.has(b.uid));
  for (const before of revoked) {
    await d.audit?.record(tx, p, {
      type: ROLE_BINDING_TYPE,
      operation: 'delete',
      uid: before.uid,
      before,
      ...(cause ? { cause } : {}),
    });
  }
  return revoked;
}
