import { isCapability, type Capability } from '../../auth/capabilities.js';
import { MAX_TOKEN_SCOPE } from '../../auth/api-token-authenticator.js';
import { OAuthError } from './oauth-error.js';
import { tokenTarget } from './resource-target.js';

export const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const TOKEN_TYPE = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
} as const;

/** The form of a token request, parsed and bounded. */
export interface TokenExchangeRequest {
  subjectToken: string;
  /** `access`: an Arbor API token; `workload`: an upstream OIDC token (id_token or jwt). */
  subjectKind: 'access' | 'workload';
  identity: string | undefined;
  scope: Capability[] | undefined;
  resources: string[] | undefined;
  /**
   * The resource server the token is for (RFC 8707 `resource` or RFC 8693 `audience`, one
   * of ARBOR_OAUTH_RESOURCE_SERVERS as configured); undefined: Arbor's own API.
   */
  target: string | undefined;
  /** RFC 8693's actor: who acts for the subject (delegation, docs/oauth.md). */
  actor: ActorRequest | undefined;
}

/** The actor of a delegation: its token, of which kind, and (for an OIDC token) its identity. */
export interface ActorRequest {
  token: string;
  kind: TokenExchangeRequest['subjectKind'];
  /** `actor_identity` (an Arbor parameter): the identity an OIDC actor token assumes. */
  identity: string | undefined;
}

/** A token (subject, actor, introspected, revoked) is at most this long. */
export const MAX_TOKEN_CHARS = 8192;
const MAX_VALUE_CHARS = 512;
const MAX_SCOPE_CHARS = 2048;
/** Parameters a request may repeat (RFC 8707's resource, RFC 8693's audience). */
const REPEATABLE = new Set(['resource', 'audience']);
const KNOWN = new Set([
  'grant_type',
  'subject_token',
  'subject_token_type',
  'requested_token_type',
  'actor_token',
  'actor_token_type',
  'scope',
  'resource',
  'audience',
  'identity',
  'actor_identity',
  'client_id',
]);

/**
 * The one value of a form parameter: absent, or given once within its bound.
 * @throws OAuthError invalid_request for a repeated or oversized parameter.
 */
export function single(form: URLSearchParams, name: string, max = MAX_VALUE_CHARS) {
  const all = form.getAll(name);
  if (all.length > 1) throw new OAuthError('invalid_request', `${name} must be given once`);
  const v = all[0];
  if (v !== undefined && v.length > max)
    throw new OAuthError('invalid_request', `${name} is longer than ${max} characters`);
  return v === '' ? undefined : v;
}

/**
 * A token exchange request (RFC 8693 §2.1) from its form, every input bounded.
 * @throws OAuthError invalid_request, unsupported_grant_type, invalid_scope, invalid_target.
 */
export function parseTokenRequest(
  form: URLSearchParams,
  audience: string,
  resourceServers: readonly string[] = [],
): TokenExchangeRequest {
  for (const name of new Set(form.keys())) {
    if (!KNOWN.has(name)) throw new OAuthError('invalid_request', `unknown parameter ${name}`);
    if (!REPEATABLE.has(name) && form.getAll(name).length > 1)
      throw new OAuthError('invalid_request', `${name} must be given once`);
  }
  const grant = single(form, 'grant_type');
  if (grant === undefined) throw new OAuthError('invalid_request', 'grant_type is required');
  if (grant !== GRANT_TOKEN_EXCHANGE)
    throw new OAuthError('unsupported_grant_type', `only ${GRANT_TOKEN_EXCHANGE} is supported`);
  const subjectToken = single(form, 'subject_token', MAX_TOKEN_CHARS);
  if (subjectToken === undefined)
    throw new OAuthError('invalid_request', 'subject_token is required');
  const subjectKind = subjectKindOf(single(form, 'subject_token_type'));
  const requested = single(form, 'requested_token_type');
  if (
    requested !== undefined &&
    requested !== TOKEN_TYPE.accessToken &&
    requested !== TOKEN_TYPE.jwt
  )
    throw new OAuthError(
      'invalid_request',
      `requested_token_type must be ${TOKEN_TYPE.accessToken}`,
    );
  const target = tokenTarget(
    form.getAll('resource'),
    form.getAll('audience'),
    audience,
    resourceServers,
  );
  return {
    subjectToken,
    subjectKind,
    identity: single(form, 'identity'),
    scope: scopeOf(single(form, 'scope', MAX_SCOPE_CHARS)),
    resources: target.groups,
    target: target.server,
    actor: actorOf(form),
  };
}

/** RFC 8693 §2.1: `actor_token_type` is required with `actor_token`, and only with it. */
function actorOf(form: URLSearchParams): ActorRequest | undefined {
  const token = single(form, 'actor_token', MAX_TOKEN_CHARS);
  const type = single(form, 'actor_token_type');
  const identity = single(form, 'actor_identity');
  if (token === undefined) {
    if (type !== undefined || identity !== undefined)
      throw new OAuthError('invalid_request', 'actor_token_type needs an actor_token');
    return undefined;
  }
  if (type === undefined)
    throw new OAuthError('invalid_request', 'actor_token_type is required with actor_token');
  return { token, kind: kindOf(type, 'actor_token_type'), identity };
}

function subjectKindOf(type: string | undefined): TokenExchangeRequest['subjectKind'] {
  if (type === undefined) throw new OAuthError('invalid_request', 'subject_token_type is required');
  return kindOf(type, 'subject_token_type');
}

function kindOf(type: string, name: string): TokenExchangeRequest['subjectKind'] {
  if (type === TOKEN_TYPE.accessToken) return 'access';
  if (type === TOKEN_TYPE.idToken || type === TOKEN_TYPE.jwt) return 'workload';
  throw new OAuthError(
    'invalid_request',
    `${name} must be ${TOKEN_TYPE.accessToken}, ${TOKEN_TYPE.idToken} or ${TOKEN_TYPE.jwt}`,
  );
}

/** Space-separated capability names (RFC 6749 §3.3), each known, at most MAX_TOKEN_SCOPE. */
function scopeOf(scope: string | undefined): Capability[] | undefined {
  if (scope === undefined) return undefined;
  // RFC 6749's scope-token is printable ASCII without space, quote or backslash.
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(scope))
    throw new OAuthError('invalid_scope', 'scope is capability names separated by single spaces');
  const words = [...new Set(scope.split(' '))];
  if (words.length > MAX_TOKEN_SCOPE)
    throw new OAuthError('invalid_scope', `at most ${MAX_TOKEN_SCOPE} capabilities`);
  const unknown = words.find((w) => !isCapability(w));
  if (unknown !== undefined)
    throw new OAuthError('invalid_scope', `${unknown.slice(0, 64)} is not a capability`);
  return (words as Capability[]).sort();
}
