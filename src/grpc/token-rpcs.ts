import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { JsonValue } from '@bufbuild/protobuf';
import type { Authenticator } from '../auth/authenticator.js';
import { parseListRequest } from '../core/list-request.js';
import { Code, type CodeNumber } from '../core/rpc-code.js';
import { ERROR_DOMAIN, invalidField, RpcError } from '../core/rpc-error.js';
import { TokenService } from '../gen/arbor/oauth/v2beta1/tokens_pb.js';
import {
  ISSUED_TOKEN_LIST,
  issuedTokenV2,
  type IssuedToken,
} from '../resources/oauth/issued-token.js';
import { OAuthError, type OAuthErrorCode } from '../resources/oauth/oauth-error.js';
import type { OAuthService } from '../resources/oauth/oauth-service.js';
import type { TokenSessionService } from '../resources/oauth/token-session-service.js';
import { GRANT_TOKEN_EXCHANGE } from '../resources/oauth/token-request.js';
import { principalOf } from './authn.js';
import type { GrpcRouter } from './json-rpc.js';
import { listQueryOf } from './list-query.js';

/** The REST door's bound on the form, so both doors refuse the same requests. */
const MAX_FORM_BYTES = 16 * 1024;

/** Each OAuth error code as a google.rpc code (its ErrorInfo `reason` keeps the OAuth code). */
const CODES: Record<OAuthErrorCode, CodeNumber> = {
  invalid_request: Code.INVALID_ARGUMENT,
  unsupported_grant_type: Code.INVALID_ARGUMENT,
  unsupported_token_type: Code.INVALID_ARGUMENT,
  invalid_scope: Code.INVALID_ARGUMENT,
  invalid_target: Code.INVALID_ARGUMENT,
  // The subject token is the exchange's credential: one that does not verify, is revoked,
  // or may not assume the identity does not authenticate the exchange.
  invalid_grant: Code.UNAUTHENTICATED,
  invalid_client: Code.UNAUTHENTICATED,
  unauthorized_client: Code.PERMISSION_DENIED,
  temporarily_unavailable: Code.UNAVAILABLE,
  server_error: Code.INTERNAL,
};

/** An OAuth refusal as a typed google.rpc error: ErrorInfo's reason is the OAuth code. */
function rpcErrorOfOAuth(e: OAuthError): RpcError {
  const code = e.status === 429 ? Code.RESOURCE_EXHAUSTED : CODES[e.error];
  return new RpcError(code, e.description, [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: e.error,
      domain: ERROR_DOMAIN,
      metadata: { oauth_error: e.error },
    },
  ]);
}

async function asRpc<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw e instanceof OAuthError ? rpcErrorOfOAuth(e) : e;
  }
}

/** A message's fields as the OAuth form the REST door would have read (empty = absent). */
function formOf(
  fields: ReadonlyArray<readonly [string, string | readonly string[]]>,
): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, v] of fields)
    for (const one of typeof v === 'string' ? [v] : v) if (one !== '') form.append(name, one);
  if (form.toString().length > MAX_FORM_BYTES)
    throw invalidField('body', `must be at most ${MAX_FORM_BYTES} bytes as a form`);
  return form;
}

function apiTokenOf(t: IssuedToken) {
  return {
    jti: t.jti,
    identity: t.identityUid,
    parentJti: t.parentJti ?? '',
    actor: t.actor ?? '',
    scope: t.scope ?? [],
    groups: t.groups ?? [],
    issueTime: timestampFromDate(t.issueTime),
    expireTime: timestampFromDate(t.expireTime),
  };
}

/**
 * TokenService: the OAuth doors (docs/oauth.md) over gRPC, calling the very service calls
 * of `/oauth2/token`, `/oauth2/introspect`, `/oauth2/revoke` and `/iam/v2beta1/tokens`.
 * ExchangeToken's credential is its subject token; every other method authenticates the
 * caller from `authorization`.
 */
export function mountTokenRpcs(
  router: GrpcRouter,
  auth: Authenticator,
  oauth: OAuthService,
  sessions: TokenSessionService,
): void {
  const m = TokenService.method;
  router.rpc(m.exchangeToken, (req) =>
    asRpc(async () => {
      const form = formOf([
        ['grant_type', GRANT_TOKEN_EXCHANGE],
        ['subject_token', req.subjectToken],
        ['subject_token_type', req.subjectTokenType],
        ['requested_token_type', req.requestedTokenType],
        ['scope', req.scope],
        ['resource', req.resource],
        ['audience', req.audience],
        ['identity', req.identity],
        ['actor_token', req.actorToken],
        ['actor_token_type', req.actorTokenType],
      ]);
      const t = await oauth.exchange(form);
      return {
        accessToken: t.access_token,
        issuedTokenType: t.issued_token_type,
        tokenType: t.token_type,
        expiresIn: BigInt(t.expires_in),
        scope: t.scope ?? '',
      };
    }),
  );
  router.rpc(m.introspectToken, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    return asRpc(async () => {
      const form = formOf([
        ['token', req.token],
        ['token_type_hint', req.tokenTypeHint],
      ]);
      const r = await oauth.introspect(p, form);
      if (!r.active) return { active: false };
      const str = (k: string) => (typeof r[k] === 'string' ? r[k] : '');
      const int = (k: string) => (typeof r[k] === 'number' ? BigInt(r[k]) : 0n);
      return {
        active: true,
        tokenType: str('token_type'),
        iss: str('iss'),
        aud: str('aud'),
        sub: str('sub'),
        exp: int('exp'),
        iat: int('iat'),
        jti: str('jti'),
        scope: str('scope'),
        arborGroups: Array.isArray(r.arbor_groups) ? (r.arbor_groups as string[]) : [],
      };
    });
  });
  router.rpc(m.revokeToken, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    return asRpc(async () => {
      await oauth.revoke(
        p,
        formOf([
          ['token', req.token],
          ['token_type_hint', req.tokenTypeHint],
        ]),
      );
      return {};
    });
  });
  router.jsonRpc(m.listTokens, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    const json: Record<string, JsonValue> = {};
    if (req.identity !== undefined) json.identity = req.identity as string;
    if (req.parent !== undefined) json.parent = req.parent as string;
    if (req.pageSize) json.pageSize = req.pageSize as number;
    if (req.pageToken) json.pageToken = req.pageToken as string;
    if (req.orderBy) json.orderBy = req.orderBy as string;
    if (req.skip) json.skip = req.skip as number;
    const q = parseListRequest(listQueryOf(json), ISSUED_TOKEN_LIST);
    const page = await sessions.list(p, q);
    return {
      tokens: page.items.map((t) => issuedTokenV2(t) as JsonValue),
      nextPageToken: page.nextPageToken ?? '',
      totalCount: page.totalCount,
      skipped: page.skipped,
    };
  });
  router.rpc(m.revokeTokenById, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    return apiTokenOf(await sessions.revoke(p, req.jti));
  });
}
