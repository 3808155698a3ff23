import type { Authorizer } from '../../auth/authorizer.js';
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
