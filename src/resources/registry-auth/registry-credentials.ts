import { decodeJwt } from 'jose';
import { Code } from '../../core/rpc-code.js';
import { isRpcError, unauthenticated } from '../../core/rpc-error.js';
import { isValidUidp } from '../../core/uidp.js';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import type { SecurityTokenService } from '../sts/security-token-service.js';
import { TOKEN_USE, type TokenIssuer } from '../../auth/token-issuer.js';
import { UPSTREAM_CLAIMS_CLAIM, readCarriedClaims } from '../../auth/upstream-claims.js';
import type { UsageRecorder } from '../../auth/usage-recorder.js';

/**
 * Who a registry client is, from the Basic credentials `docker login` and credential
 * helpers send to the token server (spec §5.5). The password may be:
 * - an Arbor API token (or the admin token); the username is not read (`_token` is usual);
 * - an Arbor token the STS issued for the registry's audience (`token_use`
 *   `registry-login`; never a registry access token this server issued);
 * - a workload's OIDC token, with the identity's uid as the username: it is exchanged at
 *   the STS exactly as `/sts/exchange?aud=<service>&identity=<uid>` would.
 * Each way, the principal carries the verified upstream token's claims (`token.claims` of
 * a binding's condition, which the token server evaluates per repository), and only those.
 */
export class RegistryCredentials {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly tokens: TokenIssuer,
    private readonly sts: SecurityTokenService,
    private readonly service: string,
    /** Where a registry-login token records its identity as used (the others record themselves). */
    private readonly usage?: UsageRecorder,
  ) {}

  /**
   * @throws RpcError UNAUTHENTICATED for credentials that name no one Arbor accepts;
   *   UNAVAILABLE when a workload issuer's keys cannot be fetched.
   */
  async principalOf(username: string, password: string): Promise<Principal> {
    try {
      return await this.authenticator.authenticate(password);
    } catch (e) {
      if (!isRpcError(e) || e.code !== Code.UNAUTHENTICATED) throw e;
    }
    let iss: unknown;
    try {
      iss = decodeJwt(password).iss;
    } catch {
      throw unauthenticated('the registry credentials are not valid');
    }
    if (iss === this.tokens.issuer) {
      try {
        // Only what the STS issued for the registry: the token server's own access tokens
        // are never credentials, or one would buy the next, wider one, forever.
        const payload = await this.tokens.verifyFor(
          password,
          this.service,
          TOKEN_USE.registryLogin,
        );
        const claims = readCarriedClaims(payload[UPSTREAM_CLAIMS_CLAIM]);
        if (isValidUidp(payload.sub) && claims !== null) {
          this.usage?.identityUsed(payload.sub);
          return Object.freeze({
            kind: 'identity',
            uid: payload.sub,
            ...(claims === undefined ? {} : { claims }),
          });
        }
      } catch {
        /* answered below */
      }
      throw unauthenticated('the registry credentials are not valid');
    }
    if (!isValidUidp(username)) {
      throw unauthenticated('a workload token needs the identity uid as the username');
    }
    let claims;
    try {
      // The exchange's judgement without signing a token nobody would read.
      ({ claims } = await this.sts.assume(password, username));
    } catch (e) {
      // A token that may not assume the identity is, to the registry, bad credentials.
      if (isRpcError(e) && e.code !== Code.UNAVAILABLE)
        throw unauthenticated('the registry credentials are not valid');
      throw e;
    }
    return Object.freeze({ kind: 'identity', uid: username, claims });
  }
}
