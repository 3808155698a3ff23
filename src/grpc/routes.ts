import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Authenticator } from '../auth/authenticator.js';
import { bearerToken } from '../auth/authenticator.js';
import type { SecurityTokenService } from '../resources/sts/security-token-service.js';
import {
  accessExtrasV2,
  checkResultV2,
  groupAccessV2,
  holderV2,
  testTokenAnswerV2,
} from '../wire/access-wire.js';
import { MAX_TEST_TOKEN_BODY_BYTES } from '../resources/sts/token-tester.js';
import { toBinary } from '@bufbuild/protobuf';
import { invalidField } from '../core/rpc-error.js';
import { WHAT_CAN_LIST, WHO_CAN_LIST } from '../resources/access/access.js';
import { UNUSED_LIST } from '../resources/usage/unused-access.js';
import { unusedFindingV2 } from '../wire/unused-access-wire.js';
import { parseListRequest } from '../core/list-request.js';
import { listQueryOf } from './list-query.js';
import type { DescService, JsonValue } from '@bufbuild/protobuf';
import { simulateAnswerV2 } from '../wire/simulate-wire.js';
import { GROUP_KIND, IDENTITY_KIND, ROLE_BINDING_KIND, ROLE_KIND } from '../wire/kinds.js';
import {
  AccessService,
  BatchCheckAccessRequestSchema,
  CheckAccessRequestSchema,
  SimulateAccessRequestSchema,
  TestTokenRequestSchema,
  type TestTokenRequest,
} from '../gen/arbor/iam/v2beta1/access_pb.js';
import { GroupsService } from '../gen/arbor/iam/v2beta1/groups_pb.js';
import { IdentitiesService } from '../gen/arbor/iam/v2beta1/identities_pb.js';
import { RoleBindingsService } from '../gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { RolesService } from '../gen/arbor/iam/v2beta1/roles_pb.js';
import { SecurityTokenService as StsService } from '../gen/arbor/sts/v2beta1/sts_pb.js';
import { TokenService } from '../gen/arbor/oauth/v2beta1/tokens_pb.js';
import type { OAuthService } from '../resources/oauth/oauth-service.js';
import type { TokenSessionService } from '../resources/oauth/token-session-service.js';
import { mountTokenRpcs } from './token-rpcs.js';
import type { Services } from '../services.js';
import { mountNameRpcs } from './name-rpcs.js';
import type { AccessPage } from '../resources/access/access-service.js';
import { principalOf } from './authn.js';
import { bodyOf, mountCrud } from './crud.js';
import type { GrpcRouter } from './json-rpc.js';

/**
 * The core's API services of the gRPC door (src/features.ts adds every feature's): the
 * v2beta1 surface of the REST door, one to one.
 */
export const API_SERVICES = [
  GroupsService,
  IdentitiesService,
  RolesService,
  RoleBindingsService,
  StsService,
  TokenService,
  AccessService,
] as const;

/**
 * The services whose every method needs an Arbor principal: their calls are authenticated
 * from the headers before a byte of the body is read. The STS is the exception: its caller
 * is the workload's upstream token, which the exchange itself verifies.
 */
export function authenticatedServices(all: readonly DescService[]): ReadonlySet<string> {
  // TokenService's ExchangeToken is the token endpoint: its subject token is the credential
  // (its other methods authenticate the caller themselves, from the same metadata).
  return new Set(all.filter((s) => s !== StsService && s !== TokenService).map((s) => s.typeName));
}

/** What the features give the gRPC door (src/features.ts): their services and methods. */
export interface GrpcFeatures {
  grpcServices: readonly DescService[];
  grpc(router: GrpcRouter, auth: Authenticator): void;
}

export interface GrpcRouteDeps {
  services: Services;
  authenticator: Authenticator;
  sts: SecurityTokenService;
  /** The OAuth doors over gRPC (TokenService); absent: not mounted. */
  oauth?: { oauth: OAuthService; sessions: TokenSessionService } | undefined;
  /** Mounted after the core's methods. */
  features: GrpcFeatures;
}

export function mountGrpcServices(router: GrpcRouter, d: GrpcRouteDeps): void {
  const s = d.services;
  const auth = d.authenticator;
  mountCrud(router, auth, GroupsService, s.groups, GROUP_KIND);
  mountCrud(router, auth, IdentitiesService, s.identities, IDENTITY_KIND);
  mountCrud(router, auth, RolesService, s.roles, ROLE_KIND);
  mountCrud(router, auth, RoleBindingsService, s.roleBindings, ROLE_BINDING_KIND);
  mountNameRpcs(router, auth, s.names);
  mountAccess(router, d);
  if (d.oauth) mountTokenRpcs(router, auth, d.oauth.oauth, d.oauth.sessions);
  d.features.grpc(router, auth);
  // The STS authenticates with the workload's own OIDC token, not an Arbor principal.
  router.rpc(StsService.method.exchange, async (req, ctx) => {
    const upstream = bearerToken(ctx.requestHeader.get('authorization') ?? undefined);
    const { token, expiry } = await d.sts.exchange(upstream, {
      aud: req.aud,
      identity: req.identity || undefined,
    });
    return { token, expiry: timestampFromDate(expiry) };
  });
}

/** Check, batch check, who-can and what-can: the REST door's answers, as proto3 JSON. */
function mountAccess(router: GrpcRouter, d: GrpcRouteDeps): void {
  const s = d.services.access;
  const m = AccessService.method;
  const who = (ctx: Parameters<typeof principalOf>[1]) => principalOf(d.authenticator, ctx);
  router.jsonRpc(
    m.checkAccess,
    async (req, ctx) =>
      // The wire answer is JSON by construction (its schema is the REST answer's).
      checkResultV2(
        await s.check(await who(ctx), bodyOf(CheckAccessRequestSchema, req)),
      ) as JsonValue,
  );
  router.jsonRpc(m.batchCheckAccess, async (req, ctx) => {
    const results = await s.batchCheck(await who(ctx), bodyOf(BatchCheckAccessRequestSchema, req));
    return { results: results.map((r) => checkResultV2(r) as JsonValue) };
  });
  const page = <T>(plural: string, p: AccessPage<T>, toWire: (i: T) => unknown) => ({
    [plural]: p.items.map((i) => toWire(i) as JsonValue),
    nextPageToken: p.nextPageToken ?? '',
    totalCount: p.totalCount,
    skipped: p.skipped,
    // A who-can or what-can answer that counts only part of the path says so.
    ...(p.partial ? { partial: true } : {}),
    ...(p.countedFrom !== undefined ? { countedFrom: p.countedFrom } : {}),
    // Who-can's conditional holders and delegations, what-can's actingFor (REST's fields).
    ...(accessExtrasV2(p) as Record<string, JsonValue>),
  });
  router.jsonRpc(m.whoCan, async (req, ctx) => {
    const q = parseListRequest(listQueryOf(bodyOf(m.whoCan.input, req) as JsonValue), WHO_CAN_LIST);
    return page('identities', await s.whoCan(await who(ctx), q), holderV2);
  });
  router.jsonRpc(m.whatCan, async (req, ctx) => {
    const q = parseListRequest(
      listQueryOf(bodyOf(m.whatCan.input, req) as JsonValue),
      WHAT_CAN_LIST,
    );
    return page('groups', await s.whatCan(await who(ctx), q), groupAccessV2);
  });
  router.jsonRpc(m.unusedAccess, async (req, ctx) => {
    const q = parseListRequest(
      listQueryOf(bodyOf(m.unusedAccess.input, req) as JsonValue),
      UNUSED_LIST,
    );
    return page('findings', await d.services.unusedAccess.list(await who(ctx), q), unusedFindingV2);
  });
  router.jsonRpc(m.testToken, async (req, ctx) => {
    const p = await who(ctx);
    // The REST door's bound on this body, so both doors refuse the same requests.
    if (
      toBinary(TestTokenRequestSchema, req as TestTokenRequest).length > MAX_TEST_TOKEN_BODY_BYTES
    )
      throw invalidField('body', `must be at most ${MAX_TEST_TOKEN_BODY_BYTES} bytes`);
    const answer = await d.services.tokenTester.test(p, bodyOf(TestTokenRequestSchema, req));
    return testTokenAnswerV2(answer) as JsonValue;
  });
  router.jsonRpc(m.simulateAccess, async (req, ctx) => {
    const p = await who(ctx);
    const answer = await d.services.accessSimulator.simulate(
      p,
      withRemovals(bodyOf(SimulateAccessRequestSchema, req)),
    );
    return simulateAnswerV2(answer) as JsonValue;
  });
}

/**
 * proto3 leaves an empty list out of its JSON: a set_delegation_policy change without
 * actors is REST's `actors: []`, a removal (as SetDelegationPolicy reads it).
 */
function withRemovals(body: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(body.changes)) return body;
  const changes: unknown[] = body.changes.map((c: unknown) => {
    if (typeof c !== 'object' || c === null || !('setDelegationPolicy' in c)) return c;
    const set = (c as { setDelegationPolicy: object }).setDelegationPolicy;
    return { ...c, setDelegationPolicy: { actors: [], ...set } };
  });
  return { ...body, changes };
}
