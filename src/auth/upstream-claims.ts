/**
 * The upstream claims an API token carries (`token.claims` of a binding's condition,
 * docs/api.md "Conditional role bindings"): what the verified OIDC token it was exchanged
 * from said of the workload (`ref`, `repository`, `kubernetes.io.namespace`, …).
 *
 * Only ever taken from an upstream token whose signature, issuer and claim match the STS
 * has verified; an API token derived from another API token (down-scoped, delegated)
 * carries its subject token's claims unchanged. Nothing a client sends beside the token
 * (scope, form fields, headers) becomes a claim.
 *
 * Bounded, so that a token stays small and a condition reads plain values:
 * - scalars only: strings of at most MAX_CLAIM_VALUE_CHARS characters, booleans, finite
 *   numbers; a longer string, an array or null is dropped (never truncated: a truncated
 *   value could satisfy a `startsWith` the real one does not);
 * - a nested object is flattened into dotted names (`{"kubernetes.io": {"namespace": "x"}}`
 *   is `kubernetes.io.namespace`), at most MAX_CLAIM_DEPTH levels deep; a dotted name that
 *   is already taken (a claim literally named so came first) is dropped;
 * - the token's own bookkeeping is dropped: `aud`, `exp`, `iat`, `nbf`, `jti` (the API
 *   token has its own) and `act`, `may_act` (the upstream's delegation, not Arbor's);
 *   `iss` and `sub` are kept, and come first (in that order);
 * - names of at most MAX_CLAIM_NAME_CHARS characters; at most MAX_UPSTREAM_CLAIMS claims
 *   and MAX_UPSTREAM_CLAIMS_BYTES bytes of JSON, kept in the token's order until a bound
 *   is reached, the rest dropped.
 * A condition that reads a dropped claim errs, and so denies (fail closed).
 */

/** The API token claim (and registry-login token claim) that holds them. */
export const UPSTREAM_CLAIMS_CLAIM = 'arbor_claims';
export const MAX_UPSTREAM_CLAIMS = 64;
export const MAX_UPSTREAM_CLAIMS_BYTES = 4096;
export const MAX_CLAIM_NAME_CHARS = 128;
export const MAX_CLAIM_VALUE_CHARS = 256;
/** How many levels of nested objects are flattened (`a.b.c`). */
export const MAX_CLAIM_DEPTH = 3;

export type ClaimValue = string | number | boolean;
/** Carried claims: flat names to scalars, in the order they were kept. */
export type UpstreamClaims = ReadonlyMap<string, ClaimValue>;

const DROPPED = new Set(['aud', 'exp', 'iat', 'nbf', 'jti', 'act', 'may_act']);

const isScalar = (v: unknown): v is ClaimValue =>
  (typeof v === 'string' && v.length <= MAX_CLAIM_VALUE_CHARS) ||
  typeof v === 'boolean' ||
  (typeof v === 'number' && Number.isFinite(v));

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON bytes one claim adds to the carried object (`"name":value,`). */
const sizeOf = (name: string, v: ClaimValue): number =>
  Buffer.byteLength(JSON.stringify(name)) + Buffer.byteLength(JSON.stringify(v)) + 2;

/** The claims to carry from a verified upstream token's payload (see the module's rules). */
export function carriedClaims(payload: Readonly<Record<string, unknown>>): UpstreamClaims {
  const out = new Map<string, ClaimValue>();
  let bytes = 2;
  const add = (name: string, v: ClaimValue): boolean => {
    if (out.size >= MAX_UPSTREAM_CLAIMS) return false;
    if (name.length === 0 || name.length > MAX_CLAIM_NAME_CHARS || out.has(name)) return true;
    const size = sizeOf(name, v);
    if (bytes + size > MAX_UPSTREAM_CLAIMS_BYTES) return false;
    out.set(name, v);
    bytes += size;
    return true;
  };
  const walk = (prefix: string, entries: [string, unknown][], depth: number): boolean => {
    for (const [k, v] of entries) {
      const name = prefix + k;
      if (isScalar(v)) {
        if (!add(name, v)) return false;
      } else if (isObject(v) && depth < MAX_CLAIM_DEPTH) {
        if (!walk(`${name}.`, Object.entries(v), depth + 1)) return false;
      }
    }
    return true;
  };
  const top = Object.entries(payload).filter(([k]) => !DROPPED.has(k));
  const first = (k: string) => k === 'iss' || k === 'sub';
  const head = [...top.filter(([k]) => k === 'iss'), ...top.filter(([k]) => k === 'sub')];
  walk('', [...head, ...top.filter(([k]) => !first(k))], 1);
  return out;
}

/** The carried claims as they are signed into a token: a plain JSON object. */
export function claimsObject(c: UpstreamClaims): Record<string, ClaimValue> {
  return Object.fromEntries(c);
}

/**
 * The carried claims of a token Arbor signed, checked against the same bounds.
 * @returns undefined when absent, null when malformed (the token is then refused whole).
 */
export function readCarriedClaims(v: unknown): UpstreamClaims | undefined | null {
  if (v === undefined) return undefined;
  if (!isObject(v)) return null;
  const entries = Object.entries(v);
  if (entries.length > MAX_UPSTREAM_CLAIMS) return null;
  let bytes = 2;
  for (const [k, x] of entries) {
    if (k.length === 0 || k.length > MAX_CLAIM_NAME_CHARS || !isScalar(x)) return null;
    bytes += sizeOf(k, x);
  }
  if (bytes > MAX_UPSTREAM_CLAIMS_BYTES) return null;
  return new Map(entries as [string, ClaimValue][]);
}
