import { CLOCK_SKEW_S } from '../../auth/token-issuer.js';
import { shown, type ClauseResult } from '../identities/claim-explain.js';

/**
 * Longest upstream token lifetime accepted (`exp - iat`, and `exp - now`). A token that
 * lives for years is a standing credential, not a workload identity; Kubernetes projected
 * tokens and cloud workload tokens live an hour or so.
 */
export const MAX_UPSTREAM_LIFETIME_S = 24 * 60 * 60;

/** Whether a token with this `exp` (and `iat`) lives longer than the STS accepts. */
export function livesTooLong(exp: number, iat: unknown, nowS: number): boolean {
  const from = typeof iat === 'number' ? iat : nowS;
  return (
    exp - from > MAX_UPSTREAM_LIFETIME_S || exp - nowS > MAX_UPSTREAM_LIFETIME_S + CLOCK_SKEW_S
  );
}

/**
 * The STS's lifetime rules on `exp`, `nbf` and `iat`, as one clause: what jose's
 * `jwtVerify` checks for it (exp required and not past, nbf not in the future, iat and nbf
 * numeric, each with CLOCK_SKEW_S of tolerance) and then `livesTooLong`.
 */
export function explainLifetime(
  claims: Readonly<Record<string, unknown>>,
  nowMs: number,
): ClauseResult {
  const no = (reason: string): ClauseResult => ({ clause: 'lifetime', passed: false, reason });
  const now = Math.floor(nowMs / 1000);
  const { exp, nbf, iat } = claims;
  if (iat !== undefined && typeof iat !== 'number')
    return no(`iat must be a number, saw ${shown(iat)}`);
  if (nbf !== undefined && typeof nbf !== 'number')
    return no(`nbf must be a number, saw ${shown(nbf)}`);
  if (exp === undefined) return no('the token must carry exp');
  if (typeof exp !== 'number') return no(`exp must be a number, saw ${shown(exp)}`);
  const at = (s: number) =>
    Number.isFinite(s) && Math.abs(s) < 8.64e12 ? new Date(s * 1000).toISOString() : shown(s);
  if (typeof nbf === 'number' && nbf > now + CLOCK_SKEW_S)
    return no(`not valid before ${at(nbf)} (nbf), it is now ${at(now)}`);
  if (exp <= now - CLOCK_SKEW_S) return no(`expired at ${at(exp)} (exp), it is now ${at(now)}`);
  if (livesTooLong(exp, iat, nowMs / 1000))
    return no(
      `valid for more than 24 hours (exp ${at(exp)}, iat ${typeof iat === 'number' ? at(iat) : 'absent'})`,
    );
  return { clause: 'lifetime', passed: true, reason: `valid now, until ${at(exp)} (exp)` };
}
