import type { Authorizer } from '../auth/authorizer.js';
import type { Principal } from '../auth/principal.js';
import { isRootUid } from '../core/uidp.js';
import type { RoleRef } from './roles/role.js';
import type { RoleBinding } from './role-bindings/role-binding.js';

/**
 * What a caller may learn about a resource another one refers to. A reference the caller
 * could not list (an identity in a sibling folder, a role defined above its scope) is
 * treated as absent when it is named in input, and is shown by uid only when it is
 * hydrated into output: otherwise a binding, an invite or an identity provider would be
 * a window onto things `List` hides, and "exists but hidden" an oracle beside "missing".
 *
 * These read only the caller's grants, which the authorizer loaded for the request's
 * capability check: no database round trip, safe inside a transaction.
 */

/** Whether `p` may list the identity `uid`. */
export function canSeeIdentity(authz: Authorizer, p: Principal, uid: string): Promise<boolean> {
  return authz.can(p, 'identity.list', uid);
}

/** A built-in role (a flat uid): visible to every caller, with no decision to make. */
export function isBuiltInRole(uid: string): boolean {
  return isRootUid(uid);
}

/** Built-in roles are visible to every caller; custom roles with `roles.list`. */
export async function canSeeRole(authz: Authorizer, p: Principal, uid: string): Promise<boolean> {
  return isBuiltInRole(uid) || authz.can(p, 'roles.list', uid);
}

/** Whether `p` may list the group `uid`. */
export function canSeeGroup(authz: Authorizer, p: Principal, uid: string): Promise<boolean> {
  return authz.can(p, 'groups.list', uid);
}

/** A role reference as `p` may see it: its uid always, its name and description if visible. */
export async function visibleRoleRef(
  authz: Authorizer,
  p: Principal,
  role: RoleRef,
): Promise<RoleRef> {
  if (await canSeeRole(authz, p, role.uid)) return role;
  return { uid: role.uid, name: '', description: '' };
}

/**
 * A hydrated binding as `p` may see it: the uids of its identity, group and role always
 * (they are the binding), the rest of each only where `p` could list that resource.
 */
export async function visibleBinding(
  authz: Authorizer,
  p: Principal,
  b: RoleBinding,
): Promise<RoleBinding> {
  if (authz.isSuperuser(p)) return b;
  const [identity, group, role] = await Promise.all([
    canSeeIdentity(authz, p, b.identity.uid),
    canSeeGroup(authz, p, b.group.uid),
    visibleRoleRef(authz, p, b.role),
  ]);
  return {
    ...b,
    identity: identity
      ? b.identity
      : { uid: b.identity.uid, name: '', description: '', subject: '', issuer: '' },
    group: group ? b.group : { uid: b.group.uid, name: '', description: '' },
    role,
  };
}
