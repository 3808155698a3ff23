import { unauthenticated } from '../core/rpc-error.js';
import { isValidUidp } from '../core/uidp.js';
import type { Authenticator } from './authenticator.js';
import type { Principal } from './principal.js';
import type { TokenIssuer } from './token-issuer.js';

/** Accepts Arbor's own API tokens (from the STS): the principal is the token's identity. */
export class ApiTokenAuthenticator implements Authenticator {
  constructor(private readonly issuer: TokenIssuer) {}

  async authenticate(token: string): Promise<Principal> {
    if (token.length > 8192) throw unauthenticated('the token is too large');
    let sub: string;
    try {
      ({ sub } = await this.issuer.verify(token));
    } catch {
      throw unauthenticated('the token is not valid');
    }
    if (!isValidUidp(sub)) throw unauthenticated('the token is not valid');
    return Object.freeze({ kind: 'identity', uid: sub });
  }
}
