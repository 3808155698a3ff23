import type { JWTPayload } from 'jose';
import { unauthenticated } from '../core/rpc-error.js';
import { isValidUidp } from '../core/uidp.js';
import type { Authenticator } from './authenticator.js';
import { isCapability, type Capability } from './capabilities.js';
import {
  ACTORS_CLAIM,
  DELEGATED_AT_CLAIM,
  MAX_DELEGATION_DEPTH,
  liveDelegation,
  type DelegationPolicies,
} from './delegation.js';
import type { Principal, TokenRestriction } from './principal.js';
import type { RevokedTokens } from './revoked-tokens.js';
import { GROUPS_CLAIM, PARENTS_CLAIM, type TokenIssuer } from './token-issuer.js';
import {
  UPSTREAM_CLAIMS_CLAIM,
  readCarriedClaims,
  type UpstreamClaims,
} from './upstream-claims.js';
import type { UsageRecorder } from './usage-recorder.js';

/** At most this many capabilities, groups and parents a token may name (the token endpoint's bounds). */
export const MAX_TOKEN_SCOPE = 64;
export const MAX_TOKEN_GROUPS = 16;
/** Eight: a delegated token's parents are its subject token's and its actor token's. */
export const MAX_TOKEN_PARENTS = 8;

/** A verified API token, as remembered: who, until when, how narrowed, which jtis revoke it. */
export interface VerifiedApiToken {
  uid: string;
  exp: number;
  iat: number | undefined;
  jti: string | undefined;
  /** Its own jti and its parents': revoking any of them revokes it. */
  revokedBy: readonly string[];
  restriction: TokenRestriction | undefined;
  /** A delegated token's start (epoch seconds): its policies' max lifetime counts from it. */
  delegatedAt?: number;
  /** The upstream claims it carries (`arbor_claims`); absent: none. */
  claims?: UpstreamClaims;
}

/**
 * Accepts Arbor's own API tokens (from the STS and the token endpoint): the principal is
 * the token's identity, narrowed by the token's scope and groups when it has them, with
 * the upstream claims the token carries (a condition's `token.claims`). A
 * token is immutable, so a successful verification is remembered until the token expires;
 * a client that sends the same token on every request pays for the signature check once
 * (only successes are remembered, and the map is bounded). Revocation is not immutable:
 * it is asked on every request (`revoked` keeps its answers itself, and briefly).
 */
export class ApiTokenAuthenticator implements Authenticator {
  readonly #verified = new Map<string, VerifiedApiToken>();

  constructor(
    private readonly issuer: TokenIssuer,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
    /** Where each accepted token records its identity as used (absent: nowhere). */
    private readonly usage?: UsageRecorder,
    /** Revoked jtis (absent: nothing is revocable). */
    private readonly revoked?: RevokedTokens,
    /** The live delegation policies (absent: every delegated token is refused). */
    private readonly delegations?: DelegationPolicies,
  ) {}

  async authenticate(token: string): Promise<Principal> {
    const t = await this.verified(token);
    if (t.exp * 1000 <= this.now()) throw unauthenticated('the token is not valid');
    if (this.revoked !== undefined) {
      for (const jti of t.revokedBy) {
        const known = this.revoked.known?.(jti);
        if (known === false) continue;
        if (known === true || (await this.revoked.isRevoked(jti)))
          throw unauthenticated('the token is not valid');
      }
    }
    const restriction = await this.restrictionNow(t);
    if (restriction === null) throw unauthenticated('the token is not valid');
    this.usage?.identityUsed(t.uid, this.now());
    return Object.freeze({
      kind: 'identity',
      uid: t.uid,
      ...(restriction === undefined ? {} : { restriction }),
      ...(t.claims === undefined ? {} : { claims: t.claims }),
    });
  }

  /**
   * The token's restriction as it holds now. A delegated token's is asked of its chain's
   * delegation policies on every call (never remembered): its scope is narrowed to what
   * they allow now, and a chain whose policy was removed, no longer names its actor, or
   * whose max lifetime has passed since the delegation began gives null (refused whole).
   */
  async restrictionNow(
    t: VerifiedApiToken,
    nowMs = this.now(),
  ): Promise<TokenRestriction | undefined | null> {
    const r = t.restriction;
    if (r?.actors === undefined) return r;
    if (this.delegations === undefined) return null;
    const live = await liveDelegation(
      this.delegations,
      t.uid,
      r.actors,
      t.delegatedAt ?? t.iat ?? 0,
      Math.floor(nowMs / 1000),
    );
    if (live === undefined) return null;
    const scope = new Set<Capability>();
    for (const c of r.scope ?? live.capabilities) if (live.capabilities.has(c)) scope.add(c);
    return Object.freeze({ ...r, scope });
  }

  /**
   * The token's verified claims, whether or not it is revoked (introspection and
   * revocation read them).
   * @throws RpcError UNAUTHENTICATED for anything but a current API token of ours.
   */
  async verified(token: string): Promise<VerifiedApiToken> {
    if (token.length > 8192) throw unauthenticated('the token is too large');
    const known = this.#verified.get(token);
    if (known && known.exp * 1000 > this.now()) return known;
    let payload: JWTPayload & { sub: string };
    try {
      payload = await this.issuer.verify(token);
    } catch {
      throw unauthenticated('the token is not valid');
    }
    const t = readClaims(payload);
    if (t === undefined) throw unauthenticated('the token is not valid');
    if (this.#verified.size >= this.maxEntries) this.#verified.clear();
    this.#verified.set(token, t);
    return t;
  }
}

/** The claims of a verified token, or undefined when any is malformed (refused whole). */
function readClaims(p: JWTPayload & { sub: string }): VerifiedApiToken | undefined {
  if (!isValidUidp(p.sub) || typeof p.exp !== 'number') return undefined;
  const jti = p.jti;
  if (jti !== undefined && (typeof jti !== 'string' || jti.length > 64)) return undefined;
  const parents = stringList(p[PARENTS_CLAIM], MAX_TOKEN_PARENTS, (s) => s.length <= 64);
  const groups = stringList(p[GROUPS_CLAIM], MAX_TOKEN_GROUPS, isValidUidp);
  const delegation = delegationOf(p);
  const claims = readCarriedClaims(p[UPSTREAM_CLAIMS_CLAIM]);
  if (parents === null || groups === null || delegation === null || claims === null)
    return undefined;
  let scope: ReadonlySet<Capability> | undefined;
  if (p.scope !== undefined) {
    if (typeof p.scope !== 'string') return undefined;
    const words = p.scope.split(' ').filter(Boolean);
    if (words.length > MAX_TOKEN_SCOPE || !words.every(isCapability)) return undefined;
    scope = new Set(words);
  }
  const restriction = restrictionOf(scope, groups, delegation?.actors);
  return Object.freeze({
    uid: p.sub,
    exp: p.exp,
    iat: typeof p.iat === 'number' ? p.iat : undefined,
    jti,
    revokedBy: Object.freeze([...(jti === undefined ? [] : [jti]), ...(parents ?? [])]),
    restriction,
    ...(delegation === undefined ? {} : { delegatedAt: delegation.since }),
    ...(claims === undefined ? {} : { claims }),
  });
}

/** A token's restriction from its claims; undefined when it narrows nothing. */
function restrictionOf(
  scope: ReadonlySet<Capability> | undefined,
  groups: readonly string[] | undefined,
  actors: readonly string[] | undefined,
): TokenRestriction | undefined {
  if (scope === undefined && groups === undefined && actors === undefined) return undefined;
  return Object.freeze({
    ...(scope === undefined ? {} : { scope }),
    ...(groups === undefined ? {} : { resources: Object.freeze(groups) }),
    ...(actors === undefined ? {} : { actors: Object.freeze(actors) }),
  });
}

/** A delegated token's chain and start; undefined: not delegated; null: malformed. */
function delegationOf(
  p: JWTPayload,
): { actors: readonly string[]; since: number } | undefined | null {
  const actors = stringList(p[ACTORS_CLAIM], MAX_DELEGATION_DEPTH, isValidUidp);
  const since = p[DELEGATED_AT_CLAIM];
  if (actors === undefined && since === undefined) return undefined;
  if (!actors || actors.length === 0 || typeof since !== 'number') return null;
  return { actors, since };
}

/** undefined: absent; null: malformed. */
function stringList(
  v: unknown,
  max: number,
  ok: (s: string) => boolean,
): readonly string[] | undefined | null {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length > max) return null;
  if (!v.every((s) => typeof s === 'string' && ok(s))) return null;
  return v as string[];
}
