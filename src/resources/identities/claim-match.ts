import type { ClaimMatch } from './identity.js';
import { patternMatches } from './claim-pattern.js';

// Where validators and the STS have always found them.
export { issuerPatternProblem, patternProblem } from './claim-pattern.js';
export { issuerProblem } from './issuer-url.js';

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
  return pattern !== undefined && patternMatches(pattern, value);
}

/**
 * Whether a *verified* token's claims satisfy a claim match: issuer and subject (exact or
 * whole-value RE2 pattern, see `claim-pattern.ts`), the audience when one is named (`aud` string or array), and
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
