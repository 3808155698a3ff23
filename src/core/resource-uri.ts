/**
 * Resource indicators (RFC 8707): the absolute URIs of resource servers Arbor may issue
 * access tokens for (`ARBOR_OAUTH_RESOURCE_SERVERS`), and how a token request's `resource`
 * or `audience` is matched against them.
 */

/** At most this many resource servers, each URI at most this long. */
export const MAX_RESOURCE_SERVERS = 64;
export const MAX_RESOURCE_URI_CHARS = 512;

/** A value with a URI scheme (`https:`): a resource server, never a group's uid or path. */
export function hasUriScheme(value: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value);
}

/**
 * The URI's canonical form (WHATWG URL serialization: host lowercased, default port and
 * dot segments dropped), or undefined when it is not an absolute http(s) URI without
 * fragment, query or credentials (RFC 8707 §2: "MUST NOT include a fragment component";
 * a query is refused too, so one server has one name).
 */
export function canonicalResourceUri(value: string): string | undefined {
  if (value.length > MAX_RESOURCE_URI_CHARS || /[#?\s]/.test(value)) return undefined;
  if (!URL.canParse(value)) return undefined;
  const u = new URL(value);
  if (u.username !== '' || u.password !== '') return undefined;
  if (u.protocol === 'https:') return u.href;
  // Plain http only on this machine (a resource server under development).
  if (u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname))
    return u.href;
  return undefined;
}

/**
 * The configured resource servers from their comma-separated list: each written in its
 * canonical form (a bare origin may leave out its `/`), none twice, at most
 * MAX_RESOURCE_SERVERS. @returns the URIs as written, or a sentence saying what is wrong.
 */
export function parseResourceServers(value: string): readonly string[] | string {
  const all = value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (all.length > MAX_RESOURCE_SERVERS) return `must name at most ${MAX_RESOURCE_SERVERS} URIs`;
  const seen = new Set<string>();
  for (const v of all) {
    const c = canonicalResourceUri(v);
    if (c === undefined)
      return (
        `must be https:// URIs (http:// only on localhost) without query, fragment or ` +
        `credentials, comma-separated; ${JSON.stringify(v.slice(0, 80))} is not`
      );
    if (c !== v && c !== `${v}/`)
      return `must be written in canonical form: ${JSON.stringify(c)}, not ${JSON.stringify(v.slice(0, 80))}`;
    if (seen.has(c)) return `names ${JSON.stringify(v.slice(0, 80))} twice`;
    seen.add(c);
  }
  return Object.freeze(all);
}

/** The configured URI (as written) that `value` names, or undefined. */
export function matchResourceServer(servers: readonly string[], value: string): string | undefined {
  const c = canonicalResourceUri(value);
  if (c === undefined) return undefined;
  return servers.find((s) => canonicalResourceUri(s) === c);
}
