import type { DescService } from '@bufbuild/protobuf';
import type { RouteTarget } from '../api/openapi/contract.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { SecretBox } from '../auth/secret-box.js';
import type { Config } from '../config.js';
import type { createStores } from '../db/stores/index.js';
import type { GrpcRouter } from '../grpc/json-rpc.js';
import type { ChangeRecorder } from '../resources/audit/audit-log.js';
import type { ListPager } from '../resources/list-pager.js';
import type { ManagedGuard } from '../resources/managed/managed-guard.js';
import type { UnitOfWork } from '../resources/tx.js';
import type { Services } from '../services.js';
import type { AnyKind } from '../wire/kinds.js';

/** What every feature's factory is given: the services step's foundation, and the core. */
export interface FeatureDeps {
  /** What every resource service takes: the unit of work, access, paging, managed marks, audit. */
  common: {
    uow: UnitOfWork;
    authz: Authorizer;
    pager: ListPager;
    managed: ManagedGuard;
    audit: ChangeRecorder;
  };
  /** The stores more than one service reads (groups, roles, bindings…); a feature's own it makes. */
  stores: ReturnType<typeof createStores>;
  /**
   * The services that are not features (groups, identities, role bindings, access…), but
   * those built after the features (admin, names, the claim tester).
   */
  services: Omit<Services, 'tokenTester' | 'names' | 'admin'>;
  config: Readonly<Config>;
  /** Seals and opens secrets stored at rest (ARBOR_SECRET_KEY). */
  secrets: SecretBox;
  /** The server's own login provider, when configured. */
  serverLogin: { issuer: string; clientId: string } | undefined;
}

/** A feature as its factory builds it: the service, and how each door mounts it. */
export interface FeatureParts<S> {
  service: S;
  /** Its REST routes (v2beta1, and v1 where v1 has the kind), on the authenticated router. */
  rest(t: RouteTarget, bodyLimit: number): void;
  /** Its gRPC methods, of the services in the feature's `grpcServices`. */
  grpc(router: GrpcRouter, auth: Authenticator): void;
}

/**
 * One feature: a resource kind (or two that live together, as repos and their tags) as one
 * module. Its file is the only place that names its store, service, REST routes and gRPC
 * mount together; each part stays in its floor. `key` is its name in `arbor.services`;
 * `kinds` and `grpcServices` are static so tables over every kind and every gRPC service
 * (wire descriptors, reflection, tests) need no composed server.
 */
export interface Feature<K extends string, S> {
  key: K;
  kinds: readonly AnyKind[];
  grpcServices: readonly DescService[];
  create(d: FeatureDeps): FeatureParts<S>;
}

/** Typed once here, so a feature's key stays a literal in the services' type. */
export const defineFeature = <K extends string, S>(f: Feature<K, S>): Feature<K, S> => f;
