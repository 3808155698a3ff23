import { unauthenticated } from '../core/rpc-error.js';
import { isValidUidp } from '../core/uidp.js';
import type { Authenticator } from './authenticator.js';
import type { Principal } from './principal.js';
import type { TokenIssuer } from './token-issuer.js';
import type { UsageRecorder } from './usage-recorder.js';

/**
 * Accepts Arbor's own API tokens (from the STS): the principal is the token's identity.
 * A token is immutable, so a successful verification is remembered until the token
 * expires; a client that sends the same token on every request pays for the signature
 * check once (only successes are remembered, and the map is bounded).
 */
export class ApiTokenAuthenticator implements Authenticator {
  readonly #verified = new Map<string, { uid: string; exp: number }>();

  constructor(
    private readonly issuer: TokenIssuer,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
    /** Where each accepted token records its identity as used (absent: nowhere). */
    private readonly usage?: UsageRecorder,
  ) {}

  async authenticate(token: string): Promise<Principal> {
    if (token.length > 8192) throw unauthenticated('the token is too large');
    const known = this.#verified.get(token);
    const now = this.now();
    if (known && known.exp * 1000 > now) {
      this.usage?.identityUsed(known.uid, now);
      return Object.freeze({ kind: 'identity', uid: known.uid });
    }
    let sub: string;
    let exp: number | undefined;
    try {
      ({ sub, exp } = await this.issuer.verify(token));
    } catch {
      throw unauthenticated('the token is not valid');
    }
    if (!isValidUidp(sub)) throw unauthenticated('the token is not valid');
    if (exp !== undefined) {
      if (this.#verified.size >= this.maxEntries) this.#verified.clear();
      this.#verified.set(token, { uid: sub, exp });
    }
    this.usage?.identityUsed(sub, now);
    return Object.freeze({ kind: 'identity', uid: sub });
  }
}
