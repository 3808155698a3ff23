import { hash, timingSafeEqual } from 'node:crypto';
import { unauthenticated } from '../core/rpc-error.js';
import { ADMIN, withVia, type Door, type Principal } from './principal.js';
import type { SignInToken } from './sign-in-token.js';

/** Turns a bearer token into a principal, or refuses it. */
export interface Authenticator {
  /**
   * `digest` is {@link tokenDigest} of `token` when the caller has it already (each request
   * hashes its token once: for the audit fingerprint and the static-token comparison).
   * @throws RpcError UNAUTHENTICATED for anything it does not accept.
   */
  authenticate(token: string, digest?: Buffer): Promise<Principal>;
}

/** Strips `Bearer ` from an Authorization header. @throws RpcError UNAUTHENTICATED. */
export function bearerToken(header: string | undefined): string {
  const m = header === undefined ? null : /^Bearer +([^\s]+)\s*$/i.exec(header);
  if (!m?.[1]) throw unauthenticated('an Authorization: Bearer token is required');
  return m[1];
}

/**
 * The caller behind an `Authorization` header, carrying how it came in (the door, the
 * request id, a fingerprint of the token — never the token) into the audit trail.
 * @throws RpcError UNAUTHENTICATED without a valid bearer token.
 */
export async function authenticateRequest(
  authenticator: Authenticator,
  header: string | undefined,
  door: Door,
  requestId?: string,
): Promise<Principal> {
  const token = bearerToken(header);
  const d = tokenDigest(token);
  return withVia(await authenticator.authenticate(token, d), {
    door,
    ...(requestId === undefined ? {} : { requestId }),
    credential: d.toString('hex', 0, 8),
  });
}

/** SHA-256 of a token: its audit fingerprint, and what the static token is compared by. */
export function tokenDigest(s: string): Buffer {
  return hash('sha256', s, 'buffer');
}

/** Compare in constant time: hashes make the lengths equal so length leaks nothing either. */
export function constantTimeEquals(a: string, b: string): boolean {
  return timingSafeEqual(tokenDigest(a), tokenDigest(b));
}

/**
 * Tries the static admin token first, then a development run's sign-in token (only ever
 * made in development: config.ts `devSignIn`), then each further authenticator (API tokens).
 */
export class ChainAuthenticator implements Authenticator {
  /** The static token's digest, taken once: each request then hashes only its own token. */
  readonly #admin: Buffer | undefined;

  constructor(
    adminToken: string | undefined,
    private readonly next: Authenticator | undefined,
    private readonly signIn?: SignInToken,
  ) {
    this.#admin = adminToken === undefined ? undefined : tokenDigest(adminToken);
  }

  async authenticate(token: string, digest?: Buffer): Promise<Principal> {
    // Equal-length digests compared in constant time: neither the token nor its length leaks.
    const d = digest ?? tokenDigest(token);
    if (this.#admin !== undefined && timingSafeEqual(d, this.#admin)) return ADMIN;
    if (this.signIn?.accepts(d)) return ADMIN;
    if (this.next) return this.next.authenticate(token);
    throw unauthenticated('the token is not valid');
  }
}
