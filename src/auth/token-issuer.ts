import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload } from 'jose';
import { signJwt, verifyJwt } from './compact-jws.js';
import { ACTORS_CLAIM, DELEGATED_AT_CLAIM } from './delegation.js';
import { SIGNING_ALG, type SigningKey } from './signing-keys.js';
import { UPSTREAM_CLAIMS_CLAIM, claimsObject, type UpstreamClaims } from './upstream-claims.js';

/** API tokens live one hour (spec §8). */
export const API_TOKEN_TTL_S = 3600;
/** Tolerated clock difference between Arbor replicas and clients. */
export const CLOCK_SKEW_S = 30;

/**
 * What a token Arbor signs is for, in its `token_use` claim; every verifier accepts only
 * its own kind, so no token is ever taken for another (a registry access token fed back to
 * the token server as a password, say). API tokens also carry RFC 9068's `typ: at+jwt`.
 */
export const TOKEN_USE = {
  /** An API token: the bearer credential of the REST and gRPC doors (`aud` = the API). */
  api: 'api',
  /** What the STS issues for the registry's audience: a credential for its token server. */
  registryLogin: 'registry-login',
  /** What the registry token server issues: access to repositories, never a credential. */
  registryAccess: 'registry-access',
  /** The bearer token on an event delivery: proof of origin for the sink, nothing more. */
  eventDelivery: 'event-delivery',
} as const;
export type TokenUse = (typeof TOKEN_USE)[keyof typeof TOKEN_USE];

/** RFC 9068: the media type of a JWT access token, in the `typ` header. */
const API_TOKEN_TYP = 'at+jwt';

/** The claim of a down-scoped API token that names the groups it is confined to. */
export const GROUPS_CLAIM = 'arbor_groups';
/** The claim naming the jtis of the tokens an API token was exchanged from. */
export const PARENTS_CLAIM = 'arbor_parents';

/** How an API token is narrowed (see TokenIssuer.sign). */
export interface ApiTokenOptions {
  scope?: readonly string[];
  groups?: readonly string[];
  parents?: readonly string[];
  ttlS?: number;
  /** The uid of the identity acting for the subject (delegation): recorded, not a claim here. */
  actor?: string;
  /** A delegated token's actors, current first (`arbor_actors`), and its start (epoch s). */
  delegation?: { actors: readonly string[]; since: number };
  /**
   * The verified upstream token's carried claims (`arbor_claims`, auth/upstream-claims.ts),
   * or the subject token's for a token derived from an API token: never the actor's.
   */
  claims?: UpstreamClaims;
}

/** What `TokenIssuer.onSigned` hears of each API token signed: never the token itself. */
export interface SignedApiToken {
  jti: string;
  subject: string;
  /** The jtis it was exchanged from, nearest first (its `arbor_parents`). */
  parents: readonly string[];
  scope: readonly string[] | undefined;
  groups: readonly string[] | undefined;
  actor: string | undefined;
  /** Epoch seconds. */
  iat: number;
  exp: number;
}

export interface Actor {
  iss: string;
  sub: string;
  aud?: string | string[];
  /** A prior actor of a delegation chain (RFC 8693 §4.1). */
  act?: Actor;
}

/** Signs Arbor's API tokens and verifies them on every request. */
export class TokenIssuer {
  readonly #keys: SigningKey[];
  readonly #jwks: JSONWebKeySet;
  readonly #local: ReturnType<typeof createLocalJWKSet>;
  /**
   * Told of every API token signed (the STS, the token endpoint, sign-in), after signing:
   * the issued-token record (auth/issued-token-recorder.ts). Must not throw nor wait.
   */
  onSigned: ((t: SignedApiToken) => void) | undefined;

  constructor(
    readonly issuer: string,
    /** The API base address that tokens are for (`aud`). */
    readonly audience: string,
    keys: SigningKey[],
    private readonly now: () => number = Date.now,
  ) {
    if (keys.length === 0) throw new Error('no signing keys');
    this.#keys = keys;
    this.#jwks = { keys: keys.map((k) => k.publicJwk) };
    this.#local = createLocalJWKSet(this.#jwks);
  }

  /** The public keys, as served at the jwks_uri. */
  jwks(): JSONWebKeySet {
    return this.#jwks;
  }

  /**
   * An API token for `subject`, with a random `jti` (what revocation names). `o` narrows
   * it (a down-scoped token from the token endpoint): `scope` and `groups` become the
   * `scope` and `arbor_groups` claims the authenticator turns into the principal's
   * restriction, `parents` the jtis of the tokens it was exchanged from (revoking any of
   * them revokes it), and `ttlS` shortens its one hour (never lengthens it). `claims`
   * become `arbor_claims`, which the authenticator turns into the principal's claims.
   */
  sign(
    subject: string,
    act: Actor,
    o: ApiTokenOptions = {},
  ): Promise<{ token: string; expiry: Date; jti: string }> {
    const key = this.#keys[0]!;
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + Math.max(1, Math.min(API_TOKEN_TTL_S, o.ttlS ?? API_TOKEN_TTL_S));
    const jti = randomUUID();
    const claims: Record<string, unknown> = { act, token_use: TOKEN_USE.api };
    if (o.scope !== undefined) claims.scope = o.scope.join(' ');
    if (o.groups !== undefined) claims[GROUPS_CLAIM] = o.groups;
    if (o.parents !== undefined && o.parents.length > 0) claims[PARENTS_CLAIM] = o.parents;
    if (o.delegation !== undefined) {
      claims[ACTORS_CLAIM] = o.delegation.actors;
      claims[DELEGATED_AT_CLAIM] = o.delegation.since;
    }
    if (o.claims !== undefined && o.claims.size > 0)
      claims[UPSTREAM_CLAIMS_CLAIM] = claimsObject(o.claims);
    const token = signJwt(
      { alg: SIGNING_ALG, kid: key.kid, typ: API_TOKEN_TYP },
      { ...claims, iss: this.issuer, sub: subject, aud: this.audience, iat, exp, jti },
      key.privateKey,
    );
    this.onSigned?.({
      jti,
      subject,
      parents: o.parents ?? [],
      scope: o.scope,
      groups: o.groups,
      actor: o.actor,
      iat,
      exp,
    });
    return Promise.resolve({ token, expiry: new Date(exp * 1000), jti });
  }

  /** @throws jose errors for anything but a current API token of ours for our audience. */
  async verify(token: string): Promise<JWTPayload & { sub: string }> {
    return this.#verify(token, this.audience, TOKEN_USE.api, API_TOKEN_TYP);
  }

  /**
   * Sign a token for another audience than the API (the container registry, §5.5, or an
   * event sink) with the same keys, so the JWKS at the jwks_uri verifies it too, and `aud`
   * keeps it from being replayed against the API or another receiver; `use` says what it
   * is for. `claims` go in verbatim; a random `jti` is added unless they carry one.
   */
  signFor(
    use: Exclude<TokenUse, 'api'>,
    audience: string,
    subject: string,
    claims: Record<string, unknown>,
    ttlS: number,
  ): Promise<{ token: string; issuedAt: Date; expiry: Date }> {
    const key = this.#keys[0]!;
    const iat = Math.floor(this.now() / 1000);
    const token = signJwt(
      { alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' },
      {
        ...claims,
        token_use: use,
        iss: this.issuer,
        sub: subject,
        aud: audience,
        iat,
        nbf: iat,
        exp: iat + ttlS,
        jti: typeof claims.jti === 'string' ? claims.jti : randomUUID(),
      },
      key.privateKey,
    );
    return Promise.resolve({
      token,
      issuedAt: new Date(iat * 1000),
      expiry: new Date((iat + ttlS) * 1000),
    });
  }

  /** Like `verify`, for a token of ours of kind `use` meant for `audience`. @throws jose errors. */
  async verifyFor(
    token: string,
    audience: string,
    use: Exclude<TokenUse, 'api'>,
  ): Promise<JWTPayload & { sub: string }> {
    return this.#verify(token, audience, use);
  }

  async #verify(
    token: string,
    audience: string,
    use: TokenUse,
    typ?: string,
  ): Promise<JWTPayload & { sub: string }> {
    const { payload } = await verifyJwt(token, this.#local, {
      issuer: this.issuer,
      audience,
      algorithms: [SIGNING_ALG],
      clockTolerance: CLOCK_SKEW_S,
      requiredClaims: ['sub', 'exp', 'iat', 'token_use'],
      currentDate: new Date(this.now()),
      ...(typ === undefined ? {} : { typ }),
    });
    if (payload.token_use !== use)
      throw new errors.JWTClaimValidationFailed('not this kind of token', payload, 'token_use');
    return payload as JWTPayload & { sub: string };
  }
}
