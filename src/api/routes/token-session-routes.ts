import type { Context } from 'koa';
import { z } from 'zod';
import { authenticateRequest, type Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import { parseListRequest, type QueryParams } from '../../core/list-request.js';
import { invalidField } from '../../core/rpc-error.js';
import { ISSUED_TOKEN_LIST, issuedTokenV2 } from '../../resources/oauth/issued-token.js';
import type { TokenSessionService } from '../../resources/oauth/token-session-service.js';
import { readJsonObject } from '../middleware/json-body.js';
import type { State } from '../middleware/request-context.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { API_ERRORS } from '../openapi/error-responses.js';
import { listParameters, listResponseSchema } from '../openapi/list-contract.js';
import { listAnswer } from './list-answer.js';

const TOKENS_PATH = '/iam/v2beta1/tokens';
const TAG = 'OAuth';
/** A revoke body is one jti: a few hundred bytes are plenty. */
const REVOKE_BODY_LIMIT = 1024;
const EXAMPLE_JTI = '0b8f3a52-6c1e-4d8e-9f3a-52c16e4d8e9f';

const issuedTokenSchema = z.object({
  jti: z.string().meta({ description: "The token's id (its `jti`): what revocation names." }),
  identity: z.string().meta({ description: "The uid of the token's identity." }),
  parentJti: z
    .string()
    .optional()
    .meta({ description: 'The jti of the token it was exchanged from, if any.' }),
  actor: z
    .string()
    .optional()
    .meta({ description: 'The identity acting for the subject (delegation), if any.' }),
  scope: z.array(z.string()).optional().meta({ description: 'Its capabilities, when narrowed.' }),
  groups: z.array(z.string()).optional().meta({ description: 'Its groups, when narrowed.' }),
  issueTime: z.string(),
  expireTime: z.string(),
});

const revokeBodySchema = z.object({
  jti: z.string().max(64).meta({ description: 'The jti of a token the caller lists.' }),
});

/** The caller: as the API's gate authenticated it, or from the Authorization header. */
async function callerOf(ctx: Context, authenticator: Authenticator): Promise<Principal> {
  const s = ctx.state as State;
  if (s.principal) return s.principal;
  return authenticateRequest(
    authenticator,
    ctx.get('authorization') || undefined,
    'rest',
    s.requestId,
  );
}

/**
 * `GET /iam/v2beta1/tokens` (the caller's live API tokens and those exchanged from them)
 * and `POST /iam/v2beta1/tokens:revoke` (one of them, and its descendants): `arbor auth
 * sessions` (docs/oauth.md, "Sessions"). google.rpc errors, as the API's.
 */
export function mountTokenSessionRoutes(
  t: RouteTarget,
  s: TokenSessionService,
  authenticator: Authenticator,
): void {
  mountOperation(
    t,
    {
      method: 'get',
      path: TOKENS_PATH,
      operationId: 'iam.tokens.list',
      summary: "The caller's live API tokens (sessions)",
      description:
        "The live, unrevoked API tokens of the caller's identity, and the tokens exchanged " +
        'from them (down-scoped or delegated), newest first. Only an unrestricted token of ' +
        'the identity may list them (a down-scoped token is PERMISSION_DENIED); the admin ' +
        'lists every identity’s (`identity` keeps one). Tokens appear within about a second ' +
        'of their issue (they are recorded in batches).',
      tags: [TAG],
      access: 'bearer',
      parameters: listParameters(ISSUED_TOKEN_LIST, { page_size: 50 }).filter(
        (x) => !x.name.startsWith('uidp.'),
      ),
      response: {
        status: 200,
        description: "A page of the caller's tokens.",
        schema: {
          name: 'ListApiTokensResponse',
          schema: listResponseSchema('tokens', issuedTokenSchema),
          io: 'output',
          parts: [{ name: 'ApiToken', schema: issuedTokenSchema, io: 'output' }],
        },
      },
      errors: API_ERRORS,
    },
    async (ctx: Context) => {
      const p = await callerOf(ctx, authenticator);
      const q = parseListRequest(ctx.query as QueryParams, ISSUED_TOKEN_LIST);
      const page = await s.list(p, q);
      ctx.body = listAnswer('tokens', page, issuedTokenV2);
    },
  );
  mountOperation(
    t,
    {
      method: 'post',
      path: `${TOKENS_PATH}:revoke`,
      operationId: 'iam.tokens.revoke',
      summary: 'Revoke one of the caller’s API tokens',
      description:
        'Revokes the listed token `jti` and, with it, every token exchanged from it; recorded ' +
        'in the audit trail (`dev.arbor.iam.api_token.deleted.v1`). A token the caller does ' +
        'not list (another identity’s, unknown, expired or already revoked) is NOT_FOUND.',
      tags: [TAG],
      access: 'bearer',
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'RevokeApiTokenBody', schema: revokeBodySchema, io: 'input' },
        required: true,
        examples: { example: { summary: 'Revoke a session', value: { jti: EXAMPLE_JTI } } },
      },
      response: {
        status: 200,
        description: 'The token revoked.',
        schema: { name: 'ApiToken', schema: issuedTokenSchema, io: 'output' },
      },
      errors: API_ERRORS,
    },
    async (ctx: Context) => {
      const p = await callerOf(ctx, authenticator);
      const body = await readJsonObject(ctx, REVOKE_BODY_LIMIT);
      const keys = Object.keys(body);
      if (keys.some((k) => k !== 'jti'))
        throw invalidField(
          keys.find((k) => k !== 'jti')!,
          'unknown field',
        );
      if (typeof body.jti !== 'string') throw invalidField('jti', 'is required');
      ctx.body = issuedTokenV2(await s.revoke(p, body.jti));
    },
  );
}
