import {
  delegationQuerySchema,
  delegationSetSchema,
} from '../../resources/delegation/delegation-policy.js';
import type { DelegationPolicyService } from '../../resources/delegation/delegation-policy-service.js';
import { delegationPolicySchema, delegationPolicyV2 } from '../../wire/delegation-policy-wire.js';
import { IDENTITY_KIND } from '../../wire/kinds.js';
import type { RouteTarget } from '../openapi/contract.js';
import { EXAMPLE_UIDS } from '../openapi/examples.js';
import { mountKindAction, type KindAction } from './kind-action.js';

const EXAMPLE_ACTOR = `${EXAMPLE_UIDS.folder}/5d4c3b2a19080706`;

const action = (t: RouteTarget, bodyLimit: number, o: KindAction) =>
  mountKindAction(
    t,
    bodyLimit,
    {
      path: IDENTITY_KIND.path,
      operationPrefix: 'iam.identities',
      bodyName: 'Identity',
      tag: 'Identities',
    },
    o,
  );

/**
 * `POST /iam/v2beta1/identities:getDelegationPolicy` and `:setDelegationPolicy`: who may act
 * for an identity at the token endpoint (docs/oauth.md, Delegation). Rules live in the service.
 */
export function mountDelegationPolicyRoutes(
  t: RouteTarget,
  s: DelegationPolicyService,
  bodyLimit: number,
): void {
  const output = {
    name: 'DelegationPolicy',
    schema: delegationPolicySchema,
    description: "The identity's delegation policy.",
  };
  action(t, bodyLimit, {
    verb: 'getDelegationPolicy',
    summary: "An identity's delegation policy",
    description:
      'Which identities may act for the identity at the token endpoint (`actor_token`), ' +
      'with which capabilities at most and for how long. For whoever may update the ' +
      'identity (`identity.update`); NOT_FOUND when it has none.',
    input: delegationQuerySchema,
    example: { identityUid: EXAMPLE_UIDS.identity },
    output,
    run: async (p, b) => delegationPolicyV2(await s.get(p, b)),
  });
  action(t, bodyLimit, {
    verb: 'setDelegationPolicy',
    summary: "Set an identity's delegation policy",
    description:
      'Let `actors` (1–32 identity uids) act for the identity with at most `capabilities` ' +
      '(names of the catalogue) for at most `maxLifetimeSeconds` (60–86400, default 3600; ' +
      'each token still lives at most an hour). `actors: []` removes the policy (the answer ' +
      'is then `{}`). Tokens already issued under it hold what the new policy allows from ' +
      'their next request on. Takes `identity.update` on the identity; a delegated token ' +
      'may not set any policy (PERMISSION_DENIED).',
    input: delegationSetSchema,
    example: {
      identityUid: EXAMPLE_UIDS.identity,
      actors: [EXAMPLE_ACTOR],
      capabilities: ['repo.list', 'repo.blobs.get'],
      maxLifetimeSeconds: 900,
    },
    output,
    run: async (p, b) => {
      const set = await s.set(p, b);
      return set ? delegationPolicyV2(set) : {};
    },
  });
}
