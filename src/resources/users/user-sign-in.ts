import { decodeJwt, decodeProtectedHeader, errors, type JWTPayload } from 'jose';
import { verifyJwt } from '../../auth/compact-jws.js';
import {
  invalidField,
  isRpcError,
  permissionDenied,
  unauthenticated,
} from '../../core/rpc-error.js';
import type { LoginProvider, UserService } from './user-service.js';
import type { RemoteKeySets } from '../../auth/remote-key-sets.js';
import { issuerProblem } from '../identities/issuer-url.js';
import {
  MAX_UPSTREAM_TOKEN_BYTES,
  requireBoundedLifetime,
  UPSTREAM_ALGORITHMS,
} from '../sts/security-token-service.js';
import { CLOCK_SKEW_S, type TokenIssuer } from '../../auth/token-issuer.js';

const DENIED = 'no trusted identity provider vouches for this token';

/**
 * A person's exchange (spec §5.2): `/sts/exchange` without `identity`. The ID token must
 * come from a trusted provider — the server's login provider or an organization's
 * IdentityProvider — and be meant for that provider's client; then the person's user
 * identity *of that provider* (registered on first sign-in) gets a one-hour API token. An
 * unknown person through an untrusted provider is refused, never registered.
 */
export class UserSignIn {
  constructor(
    private readonly users: UserService,
    private readonly keys: RemoteKeySets,
    private readonly issuer: TokenIssuer,
    private readonly allowInsecure: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * @throws RpcError INVALID_ARGUMENT (aud), UNAUTHENTICATED (not a valid token),
   *   PERMISSION_DENIED (no trusted provider for it), UNAVAILABLE (the provider's keys).
   */
  async exchange(upstream: string, aud: string[]): Promise<{ token: string; expiry: Date }> {
    const auds = aud.flatMap((a) => a.split(',')).map((a) => a.trim().replace(/\/+$/, ''));
    if (auds.length === 0 || auds.some((a) => a !== this.issuer.audience))
      throw invalidField('aud', `must be ${this.issuer.audience}`);
    if (upstream.length > MAX_UPSTREAM_TOKEN_BYTES) throw unauthenticated('the token is too large');
    let iss: unknown;
    try {
      const alg = decodeProtectedHeader(upstream).alg;
      if (!alg || !UPSTREAM_ALGORITHMS.includes(alg))
        throw unauthenticated(`algorithm ${alg ?? 'none'} is not accepted`);
      iss = decodeJwt(upstream).iss;
    } catch (e) {
      if (isRpcError(e)) throw e;
      throw unauthenticated('the token is not a JWT');
    }
    // An unverified iss is only ever compared, and only once it is a plain issuer URL.
    if (
      typeof iss !== 'string' ||
      iss === this.issuer.issuer ||
      issuerProblem(iss, this.allowInsecure) !== undefined
    )
      throw permissionDenied(DENIED);
    // Only issuers a provider names are ever fetched from: a token cannot steer Arbor.
    const providers = await this.users.providersFor(iss);
    if (providers.length === 0) throw permissionDenied(DENIED);

    const payload = await this.verify(upstream, iss);
    requireBoundedLifetime(payload, this.now());
    const via = choose(providers, payload);
    if (!via) throw permissionDenied(DENIED);
    const uid = await this.users.signIn(
      {
        issuer: iss,
        subject: String(payload.sub),
        ...(typeof payload.email === 'string' ? { email: payload.email } : {}),
        ...(typeof payload.name === 'string' ? { name: payload.name } : {}),
      },
      via,
    );
    return this.issuer.sign(uid, { iss, sub: String(payload.sub), aud: payload.aud! });
  }

  private async verify(token: string, iss: string): Promise<JWTPayload> {
    for (const refresh of [false, true]) {
      try {
        const { payload } = await verifyJwt(token, await this.keys.resolver(iss, refresh), {
          issuer: iss,
          algorithms: UPSTREAM_ALGORITHMS,
          clockTolerance: CLOCK_SKEW_S,
          requiredClaims: ['iss', 'sub', 'exp', 'aud'],
          currentDate: new Date(this.now()),
        });
        return payload;
      } catch (e) {
        // An unknown kid: the provider may have rotated; refetch (rate-limited) once.
        if (e instanceof errors.JWKSNoMatchingKey && !refresh) continue;
        if (e instanceof errors.JWTExpired) throw unauthenticated('the token has expired');
        if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JOSEError)
          throw unauthenticated('the token is not valid');
        throw e;
      }
    }
    throw unauthenticated('the token is not valid');
  }
}

/**
 * The one provider a verified ID token signs in through: the one whose client it was issued
 * to. A token meant for the server's login client is the server's; otherwise exactly one
 * organization IdP must name its client (OIDC's `azp` picks among several audiences). Two
 * IdPs naming the same client cannot both own the person: such a token signs in no one.
 */
function choose(providers: LoginProvider[], payload: JWTPayload): LoginProvider | undefined {
  const auds = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  const azp = typeof payload.azp === 'string' ? payload.azp : undefined;
  let meant = providers.filter((p) => auds.includes(p.clientId));
  const server = meant.find((p) => p.idp === undefined);
  if (server) return server;
  if (meant.length > 1 && azp !== undefined) meant = meant.filter((p) => p.clientId === azp);
  return meant.length === 1 ? meant[0] : undefined;
}
