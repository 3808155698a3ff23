import { MAX_TOKEN_GROUPS } from '../../auth/api-token-authenticator.js';
import {
  MAX_RESOURCE_URI_CHARS,
  canonicalResourceUri,
  hasUriScheme,
  matchResourceServer,
} from '../../core/resource-uri.js';
import { OAuthError } from './oauth-error.js';

/** Whom a token request's token is for, and which groups it is confined to. */
export interface TokenTarget {
  /** The resource server (as configured) the token is for; undefined: Arbor's API. */
  server: string | undefined;
  /** Group uids or paths (RFC 8707 `resource` values that are not URIs); undefined: all. */
  groups: string[] | undefined;
}

/**
 * A token request's `resource` (RFC 8707) and `audience` (RFC 8693 §2.1) values: a value
 * with a URI scheme names where the token is used (Arbor's API, `api`, or one of the
 * configured resource servers, `servers`), any other `resource` a group of Arbor's tree. A
 * token is for one place only: two resource servers, or one and Arbor's API, are refused.
 * @throws OAuthError invalid_request (too many audiences), invalid_target (a URI that is
 *   neither, one with a fragment, two places, a malformed group value).
 */
export function tokenTarget(
  resources: readonly string[],
  audiences: readonly string[],
  api: string,
  servers: readonly string[],
): TokenTarget {
  if (audiences.length > MAX_TOKEN_GROUPS)
    throw new OAuthError('invalid_request', `at most ${MAX_TOKEN_GROUPS} audience values`);
  if (resources.length > MAX_TOKEN_GROUPS)
    throw new OAuthError('invalid_target', `at most ${MAX_TOKEN_GROUPS} resources`);
  const places = new Set<string | undefined>();
  const apiUri = canonicalResourceUri(api);
  const place = (v: string, what: string): void => {
    if (v.length > MAX_RESOURCE_URI_CHARS)
      throw new OAuthError('invalid_target', `${what} is longer than ${MAX_RESOURCE_URI_CHARS}`);
    const c = canonicalResourceUri(v);
    if (v.replace(/\/+$/, '') === api || (c !== undefined && c === apiUri)) {
      places.add(undefined);
      return;
    }
    const server = matchResourceServer(servers, v);
    if (server === undefined)
      throw new OAuthError(
        'invalid_target',
        `${what} must be ${api} or a resource server Arbor issues tokens for`,
      );
    places.add(server);
  };
  for (const a of audiences) place(a, 'audience');
  const groups: string[] = [];
  for (const r of resources) {
    if (r === '' || r.length > MAX_RESOURCE_URI_CHARS)
      throw new OAuthError('invalid_target', 'a resource is a group uid or path, or a URI');
    if (hasUriScheme(r)) place(r, 'a resource URI');
    else groups.push(r);
  }
  if (places.size > 1)
    throw new OAuthError('invalid_target', 'a token is for one resource server only');
  const [server] = places;
  return { server, groups: groups.length === 0 ? undefined : [...new Set(groups)] };
}
