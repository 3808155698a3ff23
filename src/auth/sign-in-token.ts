import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long the token of a development run signs in: a working day, then restart for another. */
const SIGN_IN_TOKEN_TTL_MS = 12 * 3600_000;

/**
 * The sign-in token of a development run (`npm start` with nothing configured, see
 * config.ts `devSignIn`): 256 random bits made at start-up, held only in this process's
 * memory (as its SHA-256 digest), accepted as the bootstrap admin until the process exits
 * or {@link SIGN_IN_TOKEN_TTL_MS} has passed, whichever comes first. A restart makes a new
 * one and voids the old. Never made, and so never accepted, outside development.
 */
export class SignInToken {
  readonly #digest: Buffer;
  readonly expiresAt: number;

  private constructor(
    /** The token itself: printed once, for the person at the terminal; never logged. */
    readonly token: string,
    now: number,
    ttlMs: number,
  ) {
    // SHA-256, as authenticator.ts `tokenDigest`: requests arrive with that digest made.
    this.#digest = hash('sha256', token, 'buffer');
    this.expiresAt = now + ttlMs;
  }

  static generate(now = Date.now(), ttlMs = SIGN_IN_TOKEN_TTL_MS): SignInToken {
    // A prefix says what it is when pasted somewhere it does not belong.
    return new SignInToken(`arbor-dev-${randomBytes(32).toString('base64url')}`, now, ttlMs);
  }

  /** Equal-length digests compared in constant time: neither the token nor its length leaks. */
  accepts(digest: Buffer, now = Date.now()): boolean {
    return timingSafeEqual(digest, this.#digest) && now < this.expiresAt;
  }
}
