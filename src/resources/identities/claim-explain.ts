import { patternMatches } from './claim-pattern.js';
import type { ClaimMatch } from './identity.js';

/** One clause of a claim match (or of the STS's rules around it), judged on given claims. */
export interface ClauseResult {
  /** `issuer`, `subject`, `audience`, `lifetime`, `signature` or `claims.<name>`. */
  clause: string;
  passed: boolean;
  /** What was expected against what was seen; claim values are shown truncated. */
  reason: string;
}

/** Longest piece of a token's (attacker-chosen) claim value repeated in a reason. */
export const MAX_SHOWN_VALUE = 200;

/** A claim value for a reason: JSON-quoted, at most MAX_SHOWN_VALUE characters of it. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    // Claims are JSON, so JSON says them; anything else only by its type.
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? typeof value);
  } catch {
    text = typeof value;
  }
  const cut = text.length > MAX_SHOWN_VALUE ? `${text.slice(0, MAX_SHOWN_VALUE)}…` : text;
  return typeof value === 'string' ? JSON.stringify(cut) : cut;
}

function exactOrPattern(
  clause: string,
  claim: string,
  exact: string | undefined,
  pattern: string | undefined,
  value: unknown,
): ClauseResult {
  if (typeof value !== 'string')
    return { clause, passed: false, reason: `expected a string ${claim}, saw ${shown(value)}` };
  if (exact !== undefined) {
    const passed = value === exact;
    return { clause, passed, reason: `expected ${claim} ${shown(exact)}, saw ${shown(value)}` };
  }
  const passed = pattern !== undefined && patternMatches(pattern, value);
  return {
    clause,
    passed,
    reason: `expected ${claim} matching the pattern ${shown(pattern)} as a whole; ${shown(value)} ${
      passed ? 'matches' : 'does not match'
    }`,
  };
}

/**
 * `claimMatchAccepts`, clause by clause: the same decisions (a test holds the two to each
 * other), each with why. `claimMatchAccepts(cm, c)` is true exactly when every clause here
 * passes.
 */
export function explainClaimMatch(
  cm: ClaimMatch,
  claims: Readonly<Record<string, unknown>>,
): ClauseResult[] {
  const out = [
    exactOrPattern('issuer', 'iss', cm.issuer, cm.issuerPattern, claims.iss),
    exactOrPattern('subject', 'sub', cm.subject, cm.subjectPattern, claims.sub),
  ];
  if (cm.audience === undefined) {
    out.push({ clause: 'audience', passed: true, reason: 'the claim match names no audience' });
  } else {
    const auds = Array.isArray(claims.aud) ? (claims.aud as unknown[]) : [claims.aud];
    out.push({
      clause: 'audience',
      passed: auds.includes(cm.audience),
      reason: `expected aud to hold ${shown(cm.audience)}, saw ${shown(claims.aud)}`,
    });
  }
  for (const [name, want] of Object.entries(cm.claims ?? {})) {
    const seen = claims[name];
    out.push({
      clause: `claims.${name}`,
      passed: seen === want,
      reason: `expected ${shown(want)}, saw ${shown(seen)}`,
    });
  }
  return out;
}
