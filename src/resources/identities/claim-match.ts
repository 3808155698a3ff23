import { MAX_PATTERN_LENGTH, type ClaimMatch } from './identity.js';

/**
 * Compile a claim pattern so that it must match the whole value: `^(?:p)$`.
 * The pattern is compiled on its own first, so `a)|(b` cannot escape the group.
 *
 * @throws SyntaxError when the pattern is not a valid regular expression.
 */
export function compileAnchored(pattern: string): RegExp {
  new RegExp(pattern);
  return new RegExp(`^(?:${pattern})$`);
}

/** Why `pattern` is unacceptable as a claim pattern, or undefined when it is fine. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'must not be empty';
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `must be at most ${MAX_PATTERN_LENGTH} characters`;
  }
  try {
    compileAnchored(pattern);
  } catch {
    return 'must be a valid regular expression';
  }
  return undefined;
}

/**
 * Why `issuer` is unacceptable as an OIDC issuer, or undefined. Issuers are https URLs
 * without credentials, query or fragment; http only when insecure issuers are allowed.
 */
export function issuerProblem(issuer: string, allowInsecure: boolean): string | undefined {
  const want = allowInsecure ? 'must be an http or https URL' : 'must be an https URL';
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return want;
  }
  const okScheme = url.protocol === 'https:' || (allowInsecure && url.protocol === 'http:');
  if (!okScheme || url.hostname === '') return want;
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.search !== '' || url.hash !== '' || issuer.includes('?') || issuer.includes('#')) {
    return 'must not have a query or fragment';
  }
  return undefined;
}

/** JWK members that only private or symmetric keys carry. */
const SECRET_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

/** Why `jwks` is unacceptable as static issuer keys, or undefined when it is fine. */
export function jwksProblem(jwks: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(jwks);
  } catch {
    return 'must be a JSON Web Key Set ({"keys":[…]})';
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (typeof doc !== 'object' || Array.isArray(doc) || !Array.isArray(keys)) {
    return 'must be a JSON Web Key Set ({"keys":[…]})';
  }
  if (keys.length === 0) return 'must hold at least one key';
  for (const [i, key] of keys.entries()) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) {
      return `key ${i} must be a JSON object`;
    }
    const k = key as Record<string, unknown>;
    if (typeof k.kty !== 'string' || k.kty === '') return `key ${i} must have a "kty"`;
    if (SECRET_MEMBERS.some((m) => m in k)) return `key ${i} must be a public key`;
  }
  return undefined;
}

function matches(exact: string | undefined, pattern: string | undefined, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (exact !== undefined) return value === exact;
  return pattern !== undefined && compileAnchored(pattern).test(value);
}

/**
 * Whether a verified token's claims satisfy a claim match: issuer and subject (exact or
 * whole-value pattern), the audience when one is named (`aud` string or array), and
 * every extra claim exactly.
 */
export function claimMatchAccepts(cm: ClaimMatch, claims: Readonly<Record<string, unknown>>) {
  if (!matches(cm.issuer, cm.issuerPattern, claims.iss)) return false;
  if (!matches(cm.subject, cm.subjectPattern, claims.sub)) return false;
  if (cm.audience !== undefined) {
    const aud = claims.aud;
    const auds = Array.isArray(aud) ? aud : [aud];
    if (!auds.includes(cm.audience)) return false;
  }
  return Object.entries(cm.claims ?? {}).every(([k, v]) => claims[k] === v);
}
