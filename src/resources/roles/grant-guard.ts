import type { Authorizer, Grant } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import { permissionDenied } from '../../core/rpc-error.js';

/**
 * No escalation: whoever gives a role capabilities (defining or changing a role) or hands
 * a role out (binding it) must hold every one of those capabilities at `scope` already.
 * Otherwise `role_bindings.create` or `roles.update` alone would lead to everything.
 *
 * @throws RpcError PERMISSION_DENIED naming the capabilities the caller lacks.
 */
export async function requireHeld(
  authz: Authorizer,
  p: Principal,
  capabilities: readonly Capability[],
  scope: string,
): Promise<void> {
  if (authz.isSuperuser(p)) return;
  const held = await Promise.all(capabilities.map((c) => authz.can(p, c, scope)));
  const missing = capabilities.filter((_, i) => !held[i]);
  if (missing.length > 0) {
    throw permissionDenied(
      `cannot grant capabilities the caller does not hold: ${missing.join(', ')}`,
    );
  }
}

/**
 * The same rule for whoever changes who may assume an identity (its claimMatch or static
 * keys) or deletes it (and with it its bindings): the caller must hold, at each binding's
 * group, every capability that binding grants. Otherwise the owner of a folder could
 * rewrite the claims of an identity that lives in the folder but is bound as owner at the
 * organization, assume it, and own the organization; or delete bindings it could never
 * delete directly.
 *
 * @throws RpcError PERMISSION_DENIED when any binding grants something the caller lacks.
 */
export async function requireHoldsGrants(
  authz: Authorizer,
  p: Principal,
  grants: readonly Grant[],
): Promise<void> {
  if (authz.isSuperuser(p)) return;
  for (const g of grants) {
    for (const c of g.capabilities) {
      if (!(await authz.can(p, c, g.scope))) {
        throw permissionDenied(
          "the identity's role bindings grant capabilities the caller does not hold " +
            'where they are bound; only someone who holds them may change how it is assumed ' +
            'or delete it',
        );
      }
    }
  }
}
