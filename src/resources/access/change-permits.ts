import type { Authorizer, Grant } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import { isRpcError } from '../../core/rpc-error.js';
import { isSelfOrBelow, parentOf } from '../../core/uidp.js';
import { requireHeld, requireHoldsGrants } from '../roles/grant-guard.js';
import type { WorldBinding } from './access-delta.js';
import type { AccessChange } from './simulate.js';

/** Whether the caller could make a change itself, and if not why. */
export type Permit = { permitted: true } | { permitted: false; reason: string };

/** What a permit needs to know of the world at the change's point of the set. */
export interface PermitContext {
  now: number;
  /** The live bindings there are at that point, of the identities the set touches. */
  bindings: readonly WorldBinding[];
  roleCapabilities(uid: string): readonly Capability[] | undefined;
}

const yes: Permit = { permitted: true };

const grantOf = (b: WorldBinding): Grant => ({
  scope: b.groupUid,
  capabilities: new Set(b.capabilities),
  ...(b.expiresAt === undefined ? {} : { expiresAt: b.expiresAt }),
  ...(b.startsAt === undefined ? {} : { startsAt: b.startsAt }),
});

/**
 * The capability checks the real call makes (its `require`, and the no-escalation guards
 * of grant-guard.ts, called as they are), judged on the caller's grants now: the change
 * set does not change what the caller may do in the middle of it. A group delete is
 * judged as the cascade that would make it possible: the group's own `groups.delete`, and
 * `role_bindings.delete` and `identity.delete` (holding what the identities' bindings
 * grant) when there are bindings or identities below.
 */
export async function permitOf(
  authz: Authorizer,
  p: Principal,
  c: AccessChange,
  w: PermitContext,
): Promise<Permit> {
  // The real create refuses a past expiry from anyone, the admin token too.
  if ('createRoleBinding' in c) {
    const t = c.createRoleBinding.expireTime;
    if (t !== undefined && t.getTime() <= w.now)
      return { permitted: false, reason: 'expireTime must be in the future' };
  }
  if (authz.isSuperuser(p)) return yes;
  const lacks = async (cap: Capability, uid: string): Promise<Permit | undefined> =>
    (await authz.can(p, cap, uid))
      ? undefined
      : { permitted: false, reason: `missing capability ${cap}` };
  if ('createRoleBinding' in c) {
    const { groupUid, roleUid } = c.createRoleBinding;
    return (
      (await lacks('role_bindings.create', groupUid)) ??
      guarded(() => requireHeld(authz, p, w.roleCapabilities(roleUid) ?? [], groupUid))
    );
  }
  if ('deleteRoleBinding' in c)
    return (await lacks('role_bindings.delete', c.deleteRoleBinding.uid)) ?? yes;
  if ('updateRole' in c) {
    const { uid, capabilities } = c.updateRole;
    return (
      (await lacks('roles.update', uid)) ??
      guarded(() => requireHeld(authz, p, capabilities, parentOf(uid) ?? uid))
    );
  }
  if ('deleteIdentity' in c) {
    const uid = c.deleteIdentity.uid;
    const grants = w.bindings.filter((b) => b.identityUid === uid).map(grantOf);
    return (
      (await lacks('identity.delete', uid)) ?? guarded(() => requireHoldsGrants(authz, p, grants))
    );
  }
  const uid = c.deleteGroup.uid;
  const bound = w.bindings.some((b) => isSelfOrBelow(uid, b.groupUid));
  const within = w.bindings.filter((b) => isSelfOrBelow(uid, b.identityUid));
  return (
    (await lacks('groups.delete', uid)) ??
    (bound ? await lacks('role_bindings.delete', uid) : undefined) ??
    (within.length > 0 ? await lacks('identity.delete', uid) : undefined) ??
    guarded(() => requireHoldsGrants(authz, p, within.map(grantOf)))
  );
}

/** A guard's refusal as a verdict; anything else it throws is a fault and goes on up. */
async function guarded(check: () => Promise<void>): Promise<Permit> {
  try {
    await check();
    return yes;
  } catch (e) {
    if (isRpcError(e)) return { permitted: false, reason: e.message };
    throw e;
  }
}
