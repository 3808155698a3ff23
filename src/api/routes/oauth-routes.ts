import type { Context } from 'koa';
import { z } from 'zod';
import { authenticateRequest, type Authenticator } from '../../auth/authenticator.js';
import { CAPABILITIES } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import type { TokenIssuer } from '../../auth/token-issuer.js';
import { Code } from '../../core/rpc-code.js';
import { isRpcError } from '../../core/rpc-error.js';
import { OAuthError } from '../../resources/oauth/oauth-error.js';
import type { OAuthService } from '../../resources/oauth/oauth-service.js';
import { GRANT_TOKEN_EXCHANGE, TOKEN_TYPE } from '../../resources/oauth/token-request.js';
import { readText } from '../middleware/json-body.js';
import type { State } from '../middleware/request-context.js';
import { discoveryOperation } from './discovery-operation.js';
import { mountOperation, type OperationContract, type RouteTarget } from '../openapi/contract.js';

/** A form is small: one token of at most 8 KiB and a few bounded parameters. */
const MAX_FORM_BYTES = 16 * 1024;
export const OAUTH_PATHS = {
  token: '/oauth2/token',
  introspect: '/oauth2/introspect',
  revoke: '/oauth2/revoke',
} as const;

const tokenRequestSchema = z.object({
  grant_type: z.literal(GRANT_TOKEN_EXCHANGE),
  subject_token: z.string().max(8192),
  subject_token_type: z.enum([TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken, TOKEN_TYPE.jwt]),
  requested_token_type: z.string().optional(),
  identity: z.string().optional().meta({
    description: 'The identity an OIDC subject token assumes (required with one; uid).',
  }),
  scope: z.string().optional().meta({
    description: 'Capabilities, space separated: the token holds at most these.',
  }),
  resource: z
    .array(z.string())
    .max(16)
    .optional()
    .meta({
      description:
        'Repeated. A group (uid or path): the token holds grants only there. An absolute URI ' +
        '(RFC 8707): the resource server the token is for, Arbor’s API address or one of ' +
        'ARBOR_OAUTH_RESOURCE_SERVERS (then an RFC 9068 JWT access token with that `aud`, ' +
        'which Arbor’s API refuses); any other URI is invalid_target.',
    }),
  audience: z.string().optional().meta({
    description:
      "Arbor's API address or one of ARBOR_OAUTH_RESOURCE_SERVERS, if given (as a URI resource).",
  }),
  actor_token: z
    .string()
    .max(8192)
    .optional()
    .meta({
      description:
        "Delegation (RFC 8693): the actor's token, an Arbor API token or a workload OIDC token; " +
        "the subject's delegation policy must name the actor's identity.",
    }),
  actor_token_type: z
    .enum([TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken, TOKEN_TYPE.jwt])
    .optional()
    .meta({ description: 'Required with actor_token.' }),
  actor_identity: z.string().optional().meta({
    description: 'The identity an OIDC actor token assumes (required with one; uid).',
  }),
});

const tokenResponseSchema = z.object({
  access_token: z.string(),
  issued_token_type: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string().optional(),
});

const tokenFormSchema = z.object({
  token: z.string().max(8192),
  token_type_hint: z.string().optional(),
});

const introspectionSchema = z.looseObject({ active: z.boolean() });

const asMetadataSchema = z.looseObject({
  issuer: z.string(),
  token_endpoint: z.string(),
  jwks_uri: z.string(),
  grant_types_supported: z.array(z.string()),
});

const prMetadataSchema = z.looseObject({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
});

const FORM = 'application/x-www-form-urlencoded';

function formOperation(
  path: string,
  operationId: string,
  summary: string,
  description: string,
  body: { name: string; schema: z.ZodType; example: unknown },
  response: { name: string; schema: z.ZodType; description: string },
  access: 'public' | 'bearer' = 'public',
): OperationContract {
  return {
    method: 'post',
    path,
    operationId,
    summary,
    description,
    tags: ['OAuth'],
    // Introspection and revocation take the caller's bearer token (RFC 7662 §2.1 wants the
    // endpoint protected); the token endpoint's credential is the subject token in the form.
    access,
    requestBody: {
      mediaType: FORM,
      schema: { name: body.name, schema: body.schema, io: 'input' },
      required: true,
      examples: { example: { summary, value: body.example } },
    },
    response: {
      status: 200,
      description: response.description,
      schema: { name: response.name, schema: response.schema, io: 'output' },
      headers: ['Cache-Control'],
    },
    errors: [],
  };
}

/**
 * The OAuth 2.0 doors (docs/oauth.md): the authorization server's and the API's metadata
 * (RFC 8414, RFC 9728), the token endpoint's token exchange (RFC 8693), introspection
 * (RFC 7662) and revocation (RFC 7009). They answer OAuth's `{error, error_description}`,
 * never google.rpc.Status: their clients are OAuth libraries.
 */
export function mountOAuthRoutes(
  t: RouteTarget,
  oauth: OAuthService,
  issuer: TokenIssuer,
  authenticator: Authenticator,
): void {
  mountMetadata(t, issuer);
  mountOperation(
    t,
    formOperation(
      OAUTH_PATHS.token,
      'oauth.token',
      'Exchange a token for a narrower API token (RFC 8693)',
      'A workload OIDC token (with `identity`) or an Arbor API token becomes an API token ' +
        'holding at most the capabilities in `scope` at the groups in `resource`. With ' +
        '`actor_token`, the actor acts for the subject (delegation: the token carries `act`) ' +
        "within the subject's delegation policy. Errors are RFC 6749 §5.2 " +
        '`{error, error_description}`.',
      {
        name: 'OAuthTokenRequest',
        schema: tokenRequestSchema,
        example: {
          grant_type: GRANT_TOKEN_EXCHANGE,
          subject_token: 'eyJ…',
          subject_token_type: TOKEN_TYPE.accessToken,
          scope: 'repo.list',
        },
      },
      { name: 'OAuthTokenResponse', schema: tokenResponseSchema, description: 'The issued token.' },
    ),
    (ctx) => answer(ctx, async () => oauth.exchange(await formOf(ctx))),
  );
  mountOperation(
    t,
    formOperation(
      OAUTH_PATHS.introspect,
      'oauth.introspect',
      'Introspect an API token (RFC 7662)',
      'Authenticate with `Authorization: Bearer` (any Arbor token). The token’s own identity, ' +
        'the admin, or a caller holding identity.list on its identity learns of it; anyone ' +
        'else, and any unknown, expired or revoked token, gets `{"active":false}`. A token ' +
        'for another resource server (ARBOR_OAUTH_RESOURCE_SERVERS) may also be sent as both ' +
        'the bearer credential and `token`: a live one learns of itself (its `aud`, ' +
        '`client_id`, …); it authenticates nothing else.',
      { name: 'OAuthTokenForm', schema: tokenFormSchema, example: { token: 'eyJ…' } },
      { name: 'OAuthIntrospection', schema: introspectionSchema, description: 'What is known.' },
      'bearer',
    ),
    (ctx) =>
      answer(ctx, async () => {
        let caller: Principal;
        try {
          caller = await callerOf(ctx, authenticator);
        } catch (e) {
          const own = await ownIntrospection(ctx, oauth, e);
          ctx.remove('WWW-Authenticate');
          return own;
        }
        return oauth.introspect(caller, await formOf(ctx));
      }),
  );
  mountOperation(
    t,
    formOperation(
      OAUTH_PATHS.revoke,
      'oauth.revoke',
      'Revoke an API token (RFC 7009)',
      'Authenticate with `Authorization: Bearer` (the token itself will do). The token’s own ' +
        'identity, the admin, or a caller holding identity.update on its identity may revoke ' +
        'it; it and every token exchanged from it are then refused on every door.',
      { name: 'OAuthTokenForm', schema: tokenFormSchema, example: { token: 'eyJ…' } },
      { name: 'OAuthRevocation', schema: z.object({}), description: 'Revoked (or never valid).' },
      'bearer',
    ),
    (ctx) =>
      answer(ctx, async () => {
        const caller = await callerOf(ctx, authenticator);
        await oauth.revoke(caller, await formOf(ctx));
        return {};
      }),
  );
}

function mountMetadata(t: RouteTarget, issuer: TokenIssuer): void {
  const base = issuer.issuer;
  mountOperation(
    t,
    discoveryOperation(
      '/.well-known/oauth-authorization-server',
      'discovery.oauthAuthorizationServer',
      "The OAuth 2.0 authorization server metadata of Arbor's issuer (RFC 8414)",
      asMetadataSchema,
      'OAuthAuthorizationServerMetadata',
    ),
    (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = {
        issuer: base,
        token_endpoint: `${base}${OAUTH_PATHS.token}`,
        introspection_endpoint: `${base}${OAUTH_PATHS.introspect}`,
        revocation_endpoint: `${base}${OAUTH_PATHS.revoke}`,
        jwks_uri: `${base}/.well-known/jwks.json`,
        grant_types_supported: [GRANT_TOKEN_EXCHANGE],
        response_types_supported: [],
        scopes_supported: [...CAPABILITIES],
        token_endpoint_auth_methods_supported: ['none'],
        // RFC 7662 §2.1 lets the endpoints be protected by a bearer token: any Arbor token.
        introspection_endpoint_auth_methods_supported: ['bearer'],
        revocation_endpoint_auth_methods_supported: ['bearer'],
        subject_token_types_supported: [TOKEN_TYPE.accessToken, TOKEN_TYPE.idToken, TOKEN_TYPE.jwt],
        issued_token_types_supported: [TOKEN_TYPE.accessToken],
        token_endpoint_auth_signing_alg_values_supported: ['ES256'],
      };
    },
  );
  mountOperation(
    t,
    discoveryOperation(
      '/.well-known/oauth-protected-resource',
      'discovery.oauthProtectedResource',
      "The OAuth 2.0 protected resource metadata of Arbor's API (RFC 9728)",
      prMetadataSchema,
      'OAuthProtectedResourceMetadata',
    ),
    (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = {
        resource: issuer.audience,
        authorization_servers: [base],
        bearer_methods_supported: ['header'],
        scopes_supported: [...CAPABILITIES],
        resource_signing_alg_values_supported: ['ES256'],
      };
    },
  );
}

/**
 * The request's form: `application/x-www-form-urlencoded` only, at most MAX_FORM_BYTES,
 * every escape well formed (URLSearchParams would keep a broken one as text).
 * @throws OAuthError invalid_request.
 */
async function formOf(ctx: Context): Promise<URLSearchParams> {
  if (
    !/^application\/x-www-form-urlencoded\s*(;\s*charset=utf-8\s*)?$/i.test(ctx.get('content-type'))
  )
    throw new OAuthError('invalid_request', `the body must be ${FORM}`);
  if (Object.keys(ctx.query).length > 0)
    throw new OAuthError('invalid_request', 'parameters belong in the body, not the query');
  let text: string;
  try {
    text = await readText(ctx, MAX_FORM_BYTES);
  } catch (e) {
    if (isRpcError(e) && e.code === Code.INVALID_ARGUMENT)
      throw new OAuthError('invalid_request', `the body is larger than ${MAX_FORM_BYTES} bytes`);
    throw e;
  }
  if (/%(?![0-9a-fA-F]{2})/.test(text) || /[^\x21-\x7e]/.test(text))
    throw new OAuthError('invalid_request', 'the body is not well-formed form encoding');
  let form: URLSearchParams;
  try {
    // Decoding must not invent characters: a malformed UTF-8 escape is refused, not replaced.
    for (const part of text.split('&')) decodeURIComponent(part.replaceAll('+', ' '));
    form = new URLSearchParams(text);
  } catch {
    throw new OAuthError('invalid_request', 'the body is not well-formed form encoding');
  }
  return form;
}

/** The caller of introspection and revocation. @throws OAuthError invalid_client. */
async function callerOf(ctx: Context, authenticator: Authenticator): Promise<Principal> {
  try {
    return await authenticateRequest(
      authenticator,
      ctx.get('authorization') || undefined,
      'rest',
      (ctx.state as State).requestId,
    );
  } catch (e) {
    if (isRpcError(e) && e.code === Code.UNAUTHENTICATED) {
      ctx.set('WWW-Authenticate', 'Bearer');
      throw new OAuthError('invalid_client', 'an Authorization: Bearer token of Arbor is required');
    }
    throw e;
  }
}

/**
 * A resource server's token introspecting itself (OAuthService.introspectOwn), after the
 * authenticator refused it as a credential of Arbor's API. @throws `refusal` (the
 * authenticator's invalid_client) for anything else.
 */
async function ownIntrospection(ctx: Context, oauth: OAuthService, refusal: unknown) {
  const bearer = /^Bearer ([\x21-\x7e]{1,8192})$/i.exec(ctx.get('authorization'))?.[1];
  if (!(refusal instanceof OAuthError) || refusal.error !== 'invalid_client' || !bearer)
    throw refusal;
  const own = await oauth.introspectOwn(bearer, await formOf(ctx));
  if (own === undefined) throw refusal;
  return own;
}

/** Run `work`, answering its result or its OAuth error, never cached (RFC 6749 §5.1). */
async function answer(ctx: Context, work: () => Promise<unknown>): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  try {
    ctx.body = await work();
  } catch (e) {
    const refusal = oauthErrorOf(e);
    if (refusal === undefined) throw e;
    ctx.status = refusal.status;
    ctx.body = { error: refusal.error, error_description: refusal.description };
  }
}

function oauthErrorOf(e: unknown): OAuthError | undefined {
  if (e instanceof OAuthError) return e;
  if (!isRpcError(e)) return undefined;
  if (e.code === Code.UNAVAILABLE)
    return new OAuthError('temporarily_unavailable', 'try again later');
  if (e.code === Code.RESOURCE_EXHAUSTED)
    return new OAuthError('temporarily_unavailable', e.message, 429);
  return undefined;
}
