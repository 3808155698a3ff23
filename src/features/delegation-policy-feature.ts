import { mountDelegationPolicyRoutes } from '../api/routes/delegation-policy-routes.js';
import { mountDelegationPolicyRpcs } from '../grpc/delegation-policy-rpcs.js';
import { KnexDelegationPolicyStore } from '../db/stores/delegation-policy-store.js';
import { DelegationPolicyService } from '../resources/delegation/delegation-policy-service.js';
import { defineFeature } from './feature.js';

/**
 * Delegation policies: who may act for an identity at the token endpoint (RFC 8693
 * `actor_token`). An attribute of identities, not a kind of its own: REST's
 * `identities:getDelegationPolicy` and `:setDelegationPolicy`, gRPC's IdentitiesService
 * GetDelegationPolicy and SetDelegationPolicy.
 */
export const delegationPolicyFeature = defineFeature({
  key: 'delegationPolicies',
  kinds: [],
  grpcServices: [],
  create: (d) => {
    const service = new DelegationPolicyService({
      uow: d.common.uow,
      authz: d.common.authz,
      audit: d.common.audit,
      policies: new KnexDelegationPolicyStore(),
    });
    return {
      service,
      rest: (t, bodyLimit) => mountDelegationPolicyRoutes(t, service, bodyLimit),
      // IdentitiesService is the core's (grpc/routes.ts): the feature adds two of its methods.
      grpc: (router, auth) => mountDelegationPolicyRpcs(router, auth, service),
    };
  },
});
