import type { Context } from 'koa';
import type { z, ZodType } from 'zod';
import { parseListRequest, type ListSpec, type QueryParams } from '../../core/list-request.js';
import { WHAT_CAN_LIST, WHO_CAN_LIST } from '../../resources/access/access.js';
import { batchCheckSchema, checkSchema } from '../../resources/access/access-input.js';
import type { AccessPage, AccessService } from '../../resources/access/access-service.js';
import {
  batchCheckResponseSchema,
  checkResultSchema,
  checkResultV2,
  coverageShape,
  groupAccessSchema,
  groupAccessV2,
  whatCanExtrasShape,
  whoCanExtrasShape,
  accessExtrasV2,
  holderSchema,
  holderV2,
  testTokenAnswerV2,
  testTokenResponseSchema,
} from '../../wire/access-wire.js';
import { MAX_TEST_TOKEN_BODY_BYTES, type TokenTester } from '../../resources/sts/token-tester.js';
import { principalOf } from '../middleware/authn.js';
import { UNUSED_LIST } from '../../resources/usage/unused-access.js';
import type { UnusedAccessService } from '../../resources/usage/unused-access-service.js';
import { unusedFindingSchema, unusedFindingV2 } from '../../wire/unused-access-wire.js';
import type { Principal } from '../../auth/principal.js';
import type { Call, Read } from '../fast-reads.js';
import { madeOnce } from '../../wire/made-once.js';
import { readJsonObject } from '../middleware/json-body.js';
import { mountOperation, type OperationContract, type RouteTarget } from '../openapi/contract.js';
import { API_ERRORS } from '../openapi/error-responses.js';
import { EXAMPLE_UIDS } from '../openapi/examples.js';
import { listParameters, listResponseSchema } from '../openapi/list-contract.js';
import { listAnswer } from './list-answer.js';

const BASE = '/iam/v2beta1/access';
const TAGS = ['Access'] as const;
const EXPLAIN =
  'An answer counts only the role bindings the caller may list (`role_bindings.list` where ' +
  'they are bound; all of them for the admin token, and its own for an identity asking ' +
  'about itself), about identities it may list and at groups it may list (anything for ' +
  "itself). Where the caller may not list bindings at the organization's root, the answer " +
  'says so: `partial: true`, with `countedFrom` the topmost group on the path from which it ' +
  'counts bindings (bindings above it are left out). Who-can names, by uid, every holder whose binding the caller may list, even ' +
  'one whose identity it may not list. Expired bindings grant nothing. An identity or ' +
  'group the caller cannot see, or a group that does not exist (deleted), is NOT_FOUND ' +
  'as its Get is; an identity asking about itself at a group it may not list is ' +
  'answered from its own bindings on the path alone, whether that group exists or not.';

const ASKED =
  'A check may name the request it asks about (`resource`, `claims` as an API token carries ' +
  'them): each conditional binding is then evaluated with them, and its proof shows the ' +
  'result and the values read. A question only: it changes nothing the caller may do, and ' +
  'shows only the bindings it would show without them.';

const exampleCheck = {
  identityUid: EXAMPLE_UIDS.identity,
  capability: 'groups.list',
  groupUid: EXAMPLE_UIDS.folder,
};

/**
 * A POST of a JSON body. `fast`: a read that the fast path serves too (ADR 0008), by this
 * same `run` with the body read by the same reader.
 */
function post(
  t: RouteTarget,
  op: Omit<OperationContract, 'method' | 'tags' | 'access' | 'errors'>,
  run: Call,
  bodyLimit: number,
  fast = false,
): void {
  mountOperation(
    t,
    { ...op, method: 'post', tags: TAGS, access: 'bearer', errors: API_ERRORS },
    async (ctx: Context) => {
      ctx.body = await run(principalOf(ctx), await readJsonObject(ctx, bodyLimit));
    },
    fast ? { kind: 'call', call: run, bodyLimit } : undefined,
  );
}

function list<T>(
  t: RouteTarget,
  o: {
    path: string;
    operationId: string;
    summary: string;
    description: string;
    spec: ListSpec;
    plural: string;
    name: string;
    item: { name: string; schema: ZodType };
    example: Record<string, string | number>;
    /** Filters the list cannot go without. */
    required: readonly string[];
    toWire: (item: T) => unknown;
    /**
     * The fields beside the page: by which the answer may say it is partial (`partial`,
     * `countedFrom`), and who-can's and what-can's own (AccessExtras).
     */
    coverage?: z.ZodRawShape;
  },
  run: (p: Principal, q: ReturnType<typeof parseListRequest>) => Promise<AccessPage<T>>,
): void {
  // One function for Koa's route and the fast path (ADR 0008), as every v2 List has.
  const read: Read = async (p, _uid, query) => {
    const page = await run(p, parseListRequest(query, o.spec));
    return {
      json: JSON.stringify({
        ...listAnswer(o.plural, page, o.toWire),
        ...(page.partial ? { partial: true } : {}),
        ...(page.countedFrom !== undefined ? { countedFrom: page.countedFrom } : {}),
        ...accessExtrasV2(page),
      }),
    };
  };
  mountOperation(
    t,
    {
      method: 'get',
      path: o.path,
      operationId: o.operationId,
      summary: o.summary,
      description: o.description,
      tags: TAGS,
      access: 'bearer',
      // Access lists are keyed by their filters, not by a subtree.
      parameters: listParameters(o.spec, o.example)
        .filter((x) => !x.name.startsWith('uidp.'))
        .map((x) => (o.required.includes(x.name) ? { ...x, required: true } : x)),
      response: {
        status: 200,
        description: o.summary,
        schema: {
          name: o.name,
          schema: o.coverage
            ? listResponseSchema(o.plural, o.item.schema).extend(o.coverage)
            : listResponseSchema(o.plural, o.item.schema),
          io: 'output',
          parts: [{ ...o.item, io: 'output' }],
        },
      },
      errors: API_ERRORS,
    },
    async (ctx: Context) => {
      const answer = await read(principalOf(ctx), undefined, ctx.query as QueryParams);
      ctx.type = 'application/json';
      ctx.body = answer.json;
    },
    { kind: 'list', read },
  );
}

/** Check, batch check, who-can, what-can and the claim tester under `/iam/v2beta1/access:*`. */
export function mountAccessRoutes(
  t: RouteTarget,
  s: AccessService,
  tester: TokenTester,
  bodyLimit: number,
  unused?: UnusedAccessService,
): void {
  mountChecks(t, s, bodyLimit);
  mountAccessLists(t, s);
  mountTestToken(t, tester, bodyLimit);
  if (unused) mountUnused(t, unused);
}

/** `access:unused`: unused-access findings, a List like any other. */
function mountUnused(t: RouteTarget, s: UnusedAccessService): void {
  list(
    t,
    {
      path: `${BASE}:unused`,
      operationId: 'iam.access.unused',
      summary: 'Bindings and identities unused for a window',
      description:
        'Live role bindings that granted no decision, and identities that did not ' +
        'authenticate (STS exchange, API token, registry credentials), for `window` days ' +
        '(`Nd`, 1–365, default `90d`); never used counts from createTime. `group` keeps ' +
        'those at or below a group the caller may list; `kind` (`roleBinding` or ' +
        '`identity`) keeps one kind. By uid. A caller sees the bindings it may list ' +
        '(`role_bindings.list`) and the identities it may list (`identity.list`), as their ' +
        'Lists show them. Last use is written every few seconds (ARBOR_LAST_USED_FLUSH_MS), ' +
        'so it may lag by that much. Each finding names the bindings to expire as its remedy.',
      spec: UNUSED_LIST,
      plural: 'findings',
      name: 'UnusedAccessResponse',
      item: { name: 'UnusedAccessFinding', schema: unusedFindingSchema },
      example: { group: EXAMPLE_UIDS.folder, window: '90d', page_size: 20 },
      required: [],
      toWire: unusedFindingV2,
    },
    (p, q) => s.list(p, q),
  );
}

/** `access:check` and `access:batchCheck`. */
function mountChecks(t: RouteTarget, s: AccessService, bodyLimit: number): void {
  // A self check's answer may be one the service shares between requests (frozen).
  const checkWire = madeOnce(checkResultV2);
  post(
    t,
    {
      path: `${BASE}:check`,
      operationId: 'iam.access.check',
      summary: 'Can an identity do this here, and why?',
      description:
        'Allowed or denied, with every binding that grants it: binding uid, role, the group ' +
        `it is bound at and the path from there down to the asked group. ${EXPLAIN} ${ASKED}`,
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'CheckAccessRequest', schema: checkSchema, io: 'input' },
        required: true,
        examples: {
          example: { summary: 'Ask about an identity', value: exampleCheck },
          request: {
            summary: 'Ask about a request (a push with its token claims)',
            value: {
              ...exampleCheck,
              capability: 'manifest.create',
              resource: { type: 'repository', name: `${EXAMPLE_UIDS.folder}/app` },
              claims: { ref: 'refs/heads/feature', repository: 'acme/platform' },
            },
          },
        },
      },
      response: {
        status: 200,
        description: 'The answer and its proof.',
        schema: { name: 'CheckAccessResult', schema: checkResultSchema, io: 'output' },
      },
    },
    async (p, body) => checkWire(await s.check(p, body)),
    bodyLimit,
    true,
  );
  post(
    t,
    {
      path: `${BASE}:batchCheck`,
      operationId: 'iam.access.batchCheck',
      summary: 'Up to 100 checks in one call',
      description: `Every check answers, in order, or the call fails. ${EXPLAIN}`,
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'BatchCheckAccessRequest', schema: batchCheckSchema, io: 'input' },
        required: true,
        examples: {
          example: {
            summary: 'Two checks',
            value: { checks: [exampleCheck, { ...exampleCheck, capability: 'groups.delete' }] },
          },
        },
      },
      response: {
        status: 200,
        description: 'One answer per check.',
        schema: {
          name: 'BatchCheckAccessResponse',
          schema: batchCheckResponseSchema,
          io: 'output',
        },
      },
    },
    async (p, body) => ({ results: (await s.batchCheck(p, body)).map(checkResultV2) }),
    bodyLimit,
    true,
  );
}

/** `access:whoCan` and `access:whatCan`: Lists like any other. */
function mountAccessLists(t: RouteTarget, s: AccessService): void {
  list(
    t,
    {
      path: `${BASE}:whoCan`,
      operationId: 'iam.access.whoCan',
      summary: 'Who holds a capability at a group',
      description:
        'The identities holding `capability` at `group` (both required), by uid, each with ' +
        'its granting bindings. Conditional bindings make no holder (a list has no request ' +
        'to decide a condition on): the first page lists those who hold it by them alone ' +
        'apart, in `conditionalHolders`, each grant with its condition (`when`). ' +
        '`delegations`: the delegation policies of the listed holders that let someone act ' +
        'for them with the capability, where the caller may read them (`identity.update`). ' +
        `${EXPLAIN}`,
      spec: WHO_CAN_LIST,
      plural: 'identities',
      name: 'WhoCanResponse',
      item: { name: 'AccessHolder', schema: holderSchema },
      example: { group: EXAMPLE_UIDS.folder, capability: 'groups.list', page_size: 20 },
      required: ['group', 'capability'],
      toWire: holderV2,
      coverage: { ...coverageShape, ...whoCanExtrasShape },
    },
    (p, q) => s.whoCan(p, q),
  );
  list(
    t,
    {
      path: `${BASE}:whatCan`,
      operationId: 'iam.access.whatCan',
      summary: 'What an identity holds, group by group',
      description:
        'One item per group the identity (default: the caller) is bound at: the roles bound ' +
        'there, what they grant, and what the identity holds there and below; conditional ' +
        'bindings apart (`conditional`, each with its condition). A delegated caller is told ' +
        `whom it acts for and through whom (\`actingFor\`). ${EXPLAIN}`,
      spec: WHAT_CAN_LIST,
      plural: 'groups',
      name: 'WhatCanResponse',
      item: { name: 'GroupAccess', schema: groupAccessSchema },
      example: { identity: EXAMPLE_UIDS.identity, page_size: 20 },
      required: [],
      toWire: groupAccessV2,
      coverage: {
        partial: coverageShape.partial.meta({
          description:
            'Present (true) when groups the identity is bound at may be missing: the caller ' +
            'may not list role bindings everywhere the identity may hold them (its ' +
            "organization's root; any organization for a root-level identity). Decided from " +
            "the caller's own grants. Each group says the same of its `effectiveCapabilities`.",
        }),
        ...whatCanExtrasShape,
      },
    },
    (p, q) => s.whatCan(p, q),
  );
}

/** `access:testToken`: the claim tester. */
function mountTestToken(t: RouteTarget, tester: TokenTester, bodyLimit: number): void {
  post(
    t,
    {
      path: `${BASE}:testToken`,
      operationId: 'iam.access.testToken',
      summary: 'Would this token assume this identity? (a dry run of the STS)',
      description:
        'Judges a token (`token`, a compact JWT) or bare `claims` the way the STS exchange ' +
        'would, clause by clause: issuer, subject, audience, lifetime (exp, nbf, iat, at ' +
        'most 24 hours), every further claim the claim match requires, and, for a real ' +
        "token only, whether its signature verifies against the identity's keys (static " +
        "keys, or the issuer's published keys found by discovery exactly as an exchange " +
        'finds them, and only for an issuer the identity trusts; for an unsaved `claimMatch`, ' +
        'only when the caller may create identities somewhere). Against `identityUid` (an ' +
        'identity the caller may list: any other is NOT_FOUND, as for Get), an unsaved ' +
        '`claimMatch` (validated as on Identity create), or, with neither, every ' +
        'claim-match identity the caller may list: a page of `pageSize` identities (default ' +
        '50, at most 200) in uid order, continued with `pageToken` from `nextPageToken`; ' +
        'identities with static keys are skipped there, so a page may hold fewer results. ' +
        '**Nothing happens**: no token is issued, no sign-in is recorded, no lastSeenTime ' +
        'moves and no audit entry is written. Reasons quote claim values truncated to 200 ' +
        `characters. The body is at most ${MAX_TEST_TOKEN_BODY_BYTES / 1024} KiB.`,
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'TestTokenRequest', schema: tester.schema, io: 'input' },
        required: true,
        examples: {
          example: {
            summary: 'Claims against one identity',
            value: {
              claims: {
                iss: 'https://token.actions.githubusercontent.com',
                sub: 'repo:acme/app:ref:refs/heads/main',
                aud: 'https://arbor.example.com',
                exp: 1893456000,
              },
              identityUid: EXAMPLE_UIDS.identity,
            },
          },
          token: {
            summary: 'A token against every identity you may list',
            value: { token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiIuLi4ifQ.c2ln' },
          },
        },
      },
      response: {
        status: 200,
        description: 'One verdict per identity tested.',
        schema: { name: 'TestTokenResponse', schema: testTokenResponseSchema, io: 'output' },
      },
    },
    async (p, body) => testTokenAnswerV2(await tester.test(p, body)),
    Math.min(bodyLimit, MAX_TEST_TOKEN_BODY_BYTES),
  );
}
