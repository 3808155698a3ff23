import { SignJWT, createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { SIGNING_ALG, type SigningKey } from './signing-keys.js';

/** API tokens live one hour (spec §8). */
export const API_TOKEN_TTL_S = 3600;
/** Tolerated clock difference between Arbor replicas and clients. */
export const CLOCK_SKEW_S = 30;

export interface Actor {
  iss: string;
  sub: string;
  aud?: string | string[];
}

/** Signs Arbor's API tokens and verifies them on every request. */
export class TokenIssuer {
  readonly #keys: SigningKey[];
  readonly #jwks: JSONWebKeySet;
  readonly #local: ReturnType<typeof createLocalJWKSet>;

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

  async sign(subject: string, act: Actor): Promise<{ token: string; expiry: Date }> {
    const key = this.#keys[0]!;
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + API_TOKEN_TTL_S;
    const token = await new SignJWT({ act })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(subject)
      .setAudience(this.audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(key.privateKey);
    return { token, expiry: new Date(exp * 1000) };
  }

  /**
   * A short-lived token for someone Arbor calls (an event sink): `aud` = that receiver,
   * so it cannot be replayed against Arbor's API or another receiver.
   */
  async signFor(
    audience: string,
    claims: Record<string, unknown> & { sub: string },
    ttlS = 300,
  ): Promise<string> {
    const key = this.#keys[0]!;
    const iat = Math.floor(this.now() / 1000);
    const { sub, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(sub)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttlS)
      .sign(key.privateKey);
  }

  /** @throws jose errors for anything but a current token of ours for our audience. */
  async verify(token: string): Promise<JWTPayload & { sub: string }> {
    const { payload } = await jwtVerify(token, this.#local, {
      issuer: this.issuer,
      audience: this.audience,
      algorithms: [SIGNING_ALG],
      clockTolerance: CLOCK_SKEW_S,
      requiredClaims: ['sub', 'exp', 'iat'],
      currentDate: new Date(this.now()),
    });
    return payload as JWTPayload & { sub: string };
  }
}
