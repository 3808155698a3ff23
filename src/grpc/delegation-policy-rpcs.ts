import type { JsonValue } from '@bufbuild/protobuf';
import type { Authenticator } from '../auth/authenticator.js';
import { IdentitiesService } from '../gen/arbor/iam/v2beta1/identities_pb.js';
import type { DelegationPolicyService } from '../resources/delegation/delegation-policy-service.js';
import { delegationPolicyV2 } from '../wire/delegation-policy-wire.js';
import { principalOf } from './authn.js';
import { bodyOf } from './crud.js';
import type { GrpcRouter } from './json-rpc.js';

/**
 * IdentitiesService's GetDelegationPolicy and SetDelegationPolicy: REST's
 * `identities:getDelegationPolicy` and `:setDelegationPolicy` from the request's proto3 JSON
 * (the same service, so the same visibility, validation, errors and audit; the same wire).
 */
export function mountDelegationPolicyRpcs(
  router: GrpcRouter,
  auth: Authenticator,
  s: DelegationPolicyService,
): void {
  const m = IdentitiesService.method;
  router.jsonRpc(m.getDelegationPolicy, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    return delegationPolicyV2(
      await s.get(p, bodyOf(m.getDelegationPolicy.input, req)),
    ) as JsonValue;
  });
  router.jsonRpc(m.setDelegationPolicy, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    // proto3 leaves an empty list out of its JSON: no actors is REST's `actors: []`, a removal.
    const body = { actors: [], ...bodyOf(m.setDelegationPolicy.input, req) };
    const set = await s.set(p, body);
    return (set ? delegationPolicyV2(set) : {}) as JsonValue;
  });
}
