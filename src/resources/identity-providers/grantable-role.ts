import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { invalidField } from '../../core/rpc-error.js';
import { isRootUid, isSelfOrBelow, isValidUidp, parentOf } from '../../core/uidp.js';
import { canSeeRole } from '../reference-visibility.js';
import { requireHeld } from '../roles/grant-guard.js';
import type { Role } from '../roles/role.js';
import type { RoleStore } from '../roles/role-store.js';
import type { Tx } from '../tx.js';

/** Whether a binding at `groupUid` may name `roleUid`: a built-in, or a role at/above the group. */
export function isGrantableAt(roleUid: string, groupUid: string): boolean {
  if (isRootUid(roleUid)) return true;
  const definedAt = parentOf(roleUid);
  return definedAt !== undefined && isSelfOrBelow(definedAt, groupUid);
}

/**
 * The role an identity provider or an invite promises to bind at `groupUid`. It must exist
 * and be a built-in (flat uid) or a custom role defined at the group or above it; a missing
 * role, one defined elsewhere and one the caller cannot list get the same answer, so
 * nothing about other roles leaks.
 * A promise of a binding obeys the binding's own no-escalation rule: the caller must hold
 * every capability of the role at the group (see roles/grant-guard.ts).
 *
 * Call it after the caller's other capability checks: those load its grants, so the
 * checks here need no connection beside the transaction's.
 *
 * @throws RpcError INVALID_ARGUMENT naming `field`; PERMISSION_DENIED for escalation.
 */
export async function requireGrantableRole(
  d: { roles: Pick<RoleStore, 'get'>; authz: Authorizer },
  p: Principal,
  tx: Tx,
  roleUid: string,
  groupUid: string,
  field: string,
): Promise<Role> {
  const why = 'must be the uid of a built-in role or of a role defined at or above the group';
  if (!isValidUidp(roleUid) || !isGrantableAt(roleUid, groupUid)) throw invalidField(field, why);
  // A role the caller cannot list answers exactly like a missing one.
  const role = (await canSeeRole(d.authz, p, roleUid)) ? await d.roles.get(tx, roleUid) : undefined;
  if (!role) throw invalidField(field, why);
  await requireHeld(d.authz, p, role.capabilities, groupUid);
  return role;
}
