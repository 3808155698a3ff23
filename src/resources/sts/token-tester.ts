import { decodeJwt, decodeProtectedHeader } from 'jose';
import { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { parseListRequest } from '../../core/list-request.js';
import { invalidField } from '../../core/rpc-error.js';
import { isValidUidp } from '../../core/uidp.js';
import type { ClauseResult } from '../identities/claim-explain.js';
import { IDENTITY_LIST, type ClaimMatch, type Identity } from '../identities/identity.js';
import type { IdentitySchemas } from '../identities/identity-input.js';
import type { ListPage } from '../list-types.js';
import { parseInput } from '../validate.js';
import { MAX_UPSTREAM_TOKEN_BYTES, type DryRunTarget } from './security-token-service.js';

/** A request body is at most this large (a token is at most 8 KiB; claims a little more). */
export const MAX_TEST_TOKEN_BODY_BYTES = 64 * 1024;
/** Most claims a `claims` object may carry. */
export const MAX_TEST_CLAIMS = 64;

/** One identity's verdict on the token: would the exchange assume it, and each clause why. */
export interface TokenTestResult {
  /** Absent for an unsaved `claimMatch`. */
  identityUid?: string;
  /** Empty for an unsaved `claimMatch`. */
  identityName: string;
  wouldAssume: boolean;
  clauses: ClauseResult[];
}

export interface TokenTestAnswer {
  results: TokenTestResult[];
  /** Only when testing against the caller's identities and more remain. */
  nextPageToken?: string;
}

/** What the tester needs of identities: exactly what the caller could Get and List itself. */
export interface TesterIdentities {
  readonly schemas: Pick<IdentitySchemas, 'claimMatch'>;
  get(p: Principal, uid: string): Promise<Identity>;
  list(p: Principal, req: ReturnType<typeof parseListRequest>): Promise<ListPage<Identity>>;
}

export interface TokenDryRun {
  dryRun(
    target: DryRunTarget,
    claims: Readonly<Record<string, unknown>>,
    token?: string,
    fetchKeys?: boolean,
  ): Promise<ClauseResult[]>;
}

/**
 * Whether the caller may make Arbor fetch the keys of an issuer that only an unsaved claim
 * match names: those who may create an identity somewhere (who could make the STS fetch
 * them anyway). Anyone else could otherwise point Arbor at any host on the internet.
 */
export type MayFetchKeys = (p: Principal) => Promise<boolean>;

function testTokenSchema(claimMatch: IdentitySchemas['claimMatch']) {
  const has = (v: Record<string, unknown>, k: string) => v[k] !== undefined && v[k] !== null;
  return z
    .strictObject({
      token: z
        .string({ error: 'must be a string' })
        .min(1, { error: 'must not be empty' })
        .max(MAX_UPSTREAM_TOKEN_BYTES, { error: 'the token is too large' })
        .optional(),
      claims: z
        .record(
          z.string().max(256, { error: 'claim names are at most 256 characters' }),
          z.unknown(),
          {
            error: 'must be a JSON object of claims',
          },
        )
        .refine((o) => Object.keys(o).length <= MAX_TEST_CLAIMS, {
          error: `at most ${MAX_TEST_CLAIMS} claims`,
        })
        .optional(),
      identityUid: z
        .string({ error: 'must be a uid' })
        .refine(isValidUidp, { error: 'must be the uid of an identity' })
        .optional(),
      claimMatch: claimMatch.optional(),
      pageSize: z.number({ error: 'must be a number' }).int().min(1).max(200).optional(),
      pageToken: z.string({ error: 'must be a string' }).max(4096).optional(),
    })
    .superRefine((v, ctx) => {
      if (has(v, 'token') && has(v, 'claims'))
        ctx.addIssue({
          code: 'custom',
          path: ['claims'],
          message: 'cannot be set together with token',
        });
      else if (!has(v, 'token') && !has(v, 'claims'))
        ctx.addIssue({
          code: 'custom',
          path: ['token'],
          message: 'one of token or claims is required',
        });
      if (has(v, 'identityUid') && has(v, 'claimMatch'))
        ctx.addIssue({
          code: 'custom',
          path: ['claimMatch'],
          message: 'cannot be set together with identityUid',
        });
      const one = has(v, 'identityUid') || has(v, 'claimMatch');
      for (const k of ['pageSize', 'pageToken'])
        if (one && has(v, k))
          ctx.addIssue({
            code: 'custom',
            path: [k],
            message: 'pages only the test against all of your identities',
          });
    });
}

export type TestTokenSchema = ReturnType<typeof testTokenSchema>;

/**
 * The claim tester: a dry run of the STS exchange. Given a token or bare claims, it reports
 * for an identity the caller may see (or an unsaved claim match, or each claim-match
 * identity the caller may list) whether the exchange would assume it, clause by clause.
 * It issues no token, records no sign-in, touches no lastSeenTime and writes no audit entry.
 * A caller learns only about identities it may list: any other is NOT_FOUND, as for Get.
 */
export class TokenTester {
  readonly schema: TestTokenSchema;

  constructor(
    private readonly identities: TesterIdentities,
    private readonly sts: TokenDryRun,
    private readonly mayFetchKeys: MayFetchKeys,
  ) {
    this.schema = testTokenSchema(identities.schemas.claimMatch);
  }

  /** @throws RpcError INVALID_ARGUMENT, NOT_FOUND (an identity the caller cannot list). */
  async test(p: Principal, body: Record<string, unknown>): Promise<TokenTestAnswer> {
    const req = parseInput(this.schema, body);
    const token = req.token ?? undefined;
    const claims = token === undefined ? (req.claims ?? {}) : decodeToken(token);
    const judge = async (target: DryRunTarget, uid?: string, name = '', fetch = true) => {
      const clauses = await this.sts.dryRun(target, claims, token, fetch);
      return {
        ...(uid === undefined ? {} : { identityUid: uid }),
        identityName: name,
        wouldAssume: clauses.every((c) => c.passed),
        clauses,
      };
    };
    if (req.claimMatch) {
      const fetch = token !== undefined && (await this.mayFetchKeys(p));
      const target = { claimMatch: req.claimMatch as ClaimMatch };
      return { results: [await judge(target, undefined, '', fetch)] };
    }
    if (req.identityUid !== undefined) {
      const i = await this.identities.get(p, req.identityUid);
      return { results: [await judge(i, i.uid, i.name)] };
    }
    const page = await this.identities.list(
      p,
      parseListRequest(
        {
          ...(req.pageSize === undefined ? {} : { page_size: String(req.pageSize) }),
          ...(req.pageToken === undefined ? {} : { page_token: req.pageToken }),
        },
        IDENTITY_LIST,
      ),
    );
    const results: TokenTestResult[] = [];
    for (const i of page.items) if (i.claimMatch) results.push(await judge(i, i.uid, i.name));
    return { results, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }
}

/** @throws RpcError INVALID_ARGUMENT on `token` when it is not a compact JWT. */
function decodeToken(token: string): Record<string, unknown> {
  try {
    decodeProtectedHeader(token);
    return decodeJwt(token) as Record<string, unknown>;
  } catch {
    throw invalidField('token', 'must be a compact JWT (header.payload.signature)');
  }
}
