import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, type JWTPayload } from 'jose';
import { signJwt, verifyJwt } from './compact-jws.js';
import { isValidUidp } from '../core/uidp.js';
import type { VerifiedApiToken } from './api-token-authenticator.js';
import { MAX_TOKEN_GROUPS, MAX_TOKEN_PARENTS, MAX_TOKEN_SCOPE } from './api-token-authenticator.js';
import { isCapability, type Capability } from './capabilities.js';
import { ACTORS_CLAIM, DELEGATED_AT_CLAIM, MAX_DELEGATION_DEPTH } from './delegation.js';
import type { TokenRestriction } from './principal.js';
import { SIGNING_ALG, type SigningKey } from './signing-keys.js';
import { CLOCK_SKEW_S, GROUPS_CLAIM, PARENTS_CLAIM } from './token-issuer.js';

/**
 * `token_use` of an access token for another resource server: no verifier of Arbor's own
 * accepts it (each wants its own kind), besides its `aud` not being Arbor's.
 */
export const RESOURCE_TOKEN_USE = 'resource';
/** RFC 9068 §2.1: the `typ` of a JWT access token. */
const AT_JWT = 'at+jwt';

/** What an access token for a resource server says beyond RFC 9068's registered claims. */
export interface ResourceTokenOptions {
  /** RFC 9068 `client_id`: who asked for the token (the actor when delegated). */
  clientId: string;
  scope?: readonly string[];
  groups?: readonly string[];
  parents?: readonly string[];
  ttlS: number;
  /** RFC 8693 `act` (a delegated token only), and its chain and start for re-checking. */
  act?: unknown;
  delegation?: { actors: readonly string[]; since: number };
}

/** A verified token for a resource server: its audience, client and Arbor's view of it. */
export interface VerifiedResourceToken {
  aud: string;
  clientId: string;
  token: VerifiedApiToken;
}

/**
 * Signs and verifies JWT access tokens (RFC 9068) for the resource servers the operator
 * lets Arbor issue for (`ARBOR_OAUTH_RESOURCE_SERVERS`, RFC 8707), with Arbor's signing
 * keys, so a resource server verifies them against Arbor's JWKS. Their `aud` is that
 * server, never Arbor's API, so Arbor's API refuses them (audience confusion): they are
 * for that server only. Arbor itself reads one back only to introspect or revoke it.
 */
export class ResourceAccessTokens {
  readonly #keys: readonly SigningKey[];
  readonly #local: ReturnType<typeof createLocalJWKSet>;

  constructor(
    readonly issuer: string,
    keys: readonly SigningKey[],
    private readonly now: () => number = Date.now,
  ) {
    if (keys.length === 0) throw new Error('no signing keys');
    this.#keys = keys;
    this.#local = createLocalJWKSet({ keys: keys.map((k) => k.publicJwk) });
  }

  /** A token for `resource` naming `subject`, for `o.ttlS` seconds (at least one). */
  sign(
    resource: string,
    subject: string,
    o: ResourceTokenOptions,
  ): Promise<{ token: string; expiry: Date; jti: string }> {
    const key = this.#keys[0]!;
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + Math.max(1, Math.floor(o.ttlS));
    const jti = randomUUID();
    const claims: Record<string, unknown> = {
      client_id: o.clientId,
      token_use: RESOURCE_TOKEN_USE,
    };
    if (o.scope !== undefined) claims.scope = o.scope.join(' ');
    if (o.groups !== undefined) claims[GROUPS_CLAIM] = o.groups;
    if (o.parents !== undefined && o.parents.length > 0) claims[PARENTS_CLAIM] = o.parents;
    if (o.act !== undefined) claims.act = o.act;
    if (o.delegation !== undefined) {
      claims[ACTORS_CLAIM] = o.delegation.actors;
      claims[DELEGATED_AT_CLAIM] = o.delegation.since;
    }
    const token = signJwt(
      { alg: SIGNING_ALG, kid: key.kid, typ: AT_JWT },
      { ...claims, iss: this.issuer, sub: subject, aud: resource, iat, exp, jti },
      key.privateKey,
    );
    return Promise.resolve({ token, expiry: new Date(exp * 1000), jti });
  }

  /**
   * The claims of a token of ours for one of `resources` (whether or not revoked), or
   * undefined for anything else (another audience, another kind, malformed, expired).
   */
  async verify(
    token: string,
    resources: readonly string[],
  ): Promise<VerifiedResourceToken | undefined> {
    if (resources.length === 0 || token.length > 8192) return undefined;
    let p: JWTPayload;
    try {
      ({ payload: p } = await verifyJwt(token, this.#local, {
        issuer: this.issuer,
        audience: [...resources],
        algorithms: [SIGNING_ALG],
        typ: AT_JWT,
        clockTolerance: CLOCK_SKEW_S,
        requiredClaims: ['sub', 'exp', 'iat', 'jti', 'client_id', 'token_use'],
        currentDate: new Date(this.now()),
      }));
    } catch {
      return undefined;
    }
    if (p.token_use !== RESOURCE_TOKEN_USE) return undefined;
    // Arbor signs one audience per token: anything else is not one of these.
    if (typeof p.aud !== 'string' || typeof p.client_id !== 'string') return undefined;
    const t = claimsOf(p);
    return t && { aud: p.aud, clientId: p.client_id, token: t };
  }
}

/** Arbor's claims of a verified token, or undefined when any is malformed (refused whole). */
function claimsOf(p: JWTPayload): VerifiedApiToken | undefined {
  const { sub, exp, iat, jti } = p;
  if (typeof sub !== 'string' || !isValidUidp(sub) || typeof exp !== 'number') return undefined;
  if (typeof jti !== 'string' || jti.length > 64 || typeof iat !== 'number') return undefined;
  const parents = list(p[PARENTS_CLAIM], MAX_TOKEN_PARENTS, (s) => s.length <= 64);
  const groups = list(p[GROUPS_CLAIM], MAX_TOKEN_GROUPS, isValidUidp);
  const delegation = delegationOf(p);
  const scope = scopeOf(p.scope);
  if (parents === null || groups === null || delegation === null || scope === null)
    return undefined;
  const actors = delegation?.actors;
  const restriction: TokenRestriction | undefined =
    scope === undefined && groups === undefined && actors === undefined
      ? undefined
      : Object.freeze({
          ...(scope === undefined ? {} : { scope }),
          ...(groups === undefined ? {} : { resources: Object.freeze([...groups]) }),
          ...(actors === undefined ? {} : { actors: Object.freeze([...actors]) }),
        });
  return Object.freeze({
    uid: sub,
    exp,
    iat,
    jti,
    revokedBy: Object.freeze([jti, ...(parents ?? [])]),
    restriction,
    ...(delegation === undefined ? {} : { delegatedAt: delegation.since }),
  });
}

/** A delegated token's chain and start; undefined: not delegated; null: malformed. */
function delegationOf(p: JWTPayload): { actors: string[]; since: number } | undefined | null {
  const actors = list(p[ACTORS_CLAIM], MAX_DELEGATION_DEPTH, isValidUidp);
  const since = p[DELEGATED_AT_CLAIM];
  if (actors === undefined && since === undefined) return undefined;
  if (!actors || actors.length === 0 || typeof since !== 'number') return null;
  return { actors, since };
}

/** The `scope` claim's capabilities; undefined: absent; null: malformed. */
function scopeOf(v: unknown): ReadonlySet<Capability> | undefined | null {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return null;
  const words = v.split(' ');
  if (words.length > MAX_TOKEN_SCOPE || !words.every(isCapability)) return null;
  return new Set(words);
}

/** undefined: absent; null: malformed. */
function list(v: unknown, max: number, ok: (s: string) => boolean): string[] | undefined | null {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length > max) return null;
  return v.every((s) => typeof s === 'string' && ok(s)) ? (v as string[]) : null;
}
