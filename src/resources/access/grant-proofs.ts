import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { ancestryOf } from '../../core/uidp.js';
import { spanEvent } from '../../tracing/spans.js';
import { isBuiltInRole, visibleRoleRef } from '../reference-visibility.js';
import type { GrantProof } from './access.js';
import type { BindingGrant } from './access-store.js';

/** The groups from `from` down to `to` (which is `from` or below it), both included. */
export function pathDown(from: string, to: string): string[] {
  const down = ancestryOf(to).reverse();
  return down.slice(down.indexOf(from));
}

/**
 * Proofs of `granting` at `groupUid`, by binding uid (or in the order given, `byUid`
 * false): each role named only where the caller may list it.
 */
export async function grantProofs(
  authz: Authorizer,
  p: Principal,
  granting: BindingGrant[],
  groupUid: string,
  byUid = true,
): Promise<GrantProof[]> {
  const proofs: GrantProof[] = [];
  const order = byUid
    ? [...granting].sort((x, y) => (x.uid < y.uid ? -1 : x.uid > y.uid ? 1 : 0))
    : granting;
  for (const b of order) {
    proofs.push({
      bindingUid: b.uid,
      role: isBuiltInRole(b.role.uid) ? b.role : await visibleRoleRef(authz, p, b.role),
      groupUid: b.groupUid,
      path: pathDown(b.groupUid, groupUid),
    });
    // Only what the answer itself shows the caller: the binding that counted and its path.
    // (The nearest bindings of a denial, in path order, prove nothing: no proof event.)
    if (byUid)
      spanEvent('access.proof', {
        'arbor.access.binding_uid': b.uid,
        'arbor.access.path_length': proofs.at(-1)!.path.length,
      });
  }
  return proofs;
}
