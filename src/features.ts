import type { DescService } from '@bufbuild/protobuf';
import type { RouteTarget } from './api/openapi/contract.js';
import type { Authenticator } from './auth/authenticator.js';
import type { FeatureDeps } from './features/feature.js';
import { accountAssociationFeature } from './features/account-association-feature.js';
import { groupInviteFeature } from './features/group-invite-feature.js';
import { identityProviderFeature } from './features/identity-provider-feature.js';
import { accessReviewFeature } from './features/access-review-feature.js';
import { registryFeature } from './features/registry-feature.js';
import { advisoryFeature } from './features/advisory-feature.js';
import { delegationPolicyFeature } from './features/delegation-policy-feature.js';
import { subscriptionFeature } from './features/subscription-feature.js';
import { accessRequestFeature } from './features/access-request-feature.js';
import type { GrpcRouter } from './grpc/json-rpc.js';
import { API_SERVICES } from './grpc/routes.js';
import { CORE_KINDS, type AnyKind } from './wire/kinds.js';

/**
 * Every feature: a resource kind wired from one module (src/features/<kind>-feature.ts).
 * Adding a kind adds its feature here and to no other list (docs/adding-a-resource.md).
 */
const FEATURES = [
  registryFeature,
  advisoryFeature,
  subscriptionFeature,
  accessRequestFeature,
  accountAssociationFeature,
  groupInviteFeature,
  identityProviderFeature,
  accessReviewFeature,
  delegationPolicyFeature,
] as const;

type AnyFeature = (typeof FEATURES)[number];

/** Every feature's service, under its key: `arbor.services.accountAssociations`. */
export type FeatureServices = {
  [F in AnyFeature as F['key']]: ReturnType<F['create']>['service'];
};

/** Every resource kind, once: the core's and every feature's. The audit trail's events are a list, not a kind. */
export const KINDS: readonly AnyKind[] = [...CORE_KINDS, ...FEATURES.flatMap((f) => f.kinds)];

/** Every API service of the gRPC door: the core's and every feature's. */
export const ALL_API_SERVICES: readonly DescService[] = [
  ...API_SERVICES,
  ...FEATURES.flatMap((f) => f.grpcServices),
];

/** What the doors mount of the features: REST routes, and gRPC services and methods. */
export interface FeatureMounts {
  rest(t: RouteTarget, bodyLimit: number): void;
  grpcServices: readonly DescService[];
  grpc(router: GrpcRouter, auth: Authenticator): void;
}

/** Builds every feature (the services step of compose(), after the core services). */
export function createFeatures(d: FeatureDeps): {
  services: FeatureServices;
  mounts: FeatureMounts;
} {
  const built = FEATURES.map((f) => [f.key, f.create(d)] as const);
  return {
    services: Object.fromEntries(built.map(([k, p]) => [k, p.service])) as FeatureServices,
    mounts: {
      rest: (t, bodyLimit) => built.forEach(([, p]) => p.rest(t, bodyLimit)),
      grpcServices: FEATURES.flatMap((f) => f.grpcServices),
      grpc: (router, auth) => built.forEach(([, p]) => p.grpc(router, auth)),
    },
  };
}
