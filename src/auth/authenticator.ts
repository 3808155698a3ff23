import { timingSafeEqual, createHash } from 'node:crypto';
import { unauthenticated } from '../core/rpc-error.js';
import { ADMIN, withVia, type Door, type Principal } from './principal.js';

/** Turns a bearer token into a principal, or refuses it. */
export interface Authenticator {
  /** @throws RpcError UNAUTHENTICATED for anything it does not accept. */
  authenticate(token: string): Promise<Principal>;
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
  return withVia(await authenticator.authenticate(token), {
    door,
    ...(requestId === undefined ? {} : { requestId }),
    credential: digest(token).toString('hex').slice(0, 16),
  });
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** Compare in constant time: hashes make the lengths equal so length leaks nothing either. */
export function constantTimeEquals(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Tries the static admin token first, then each further authenticator (API tokens).
 */
export class ChainAuthenticator implements Authenticator {
  constructor(
    private readonly adminToken: string | undefined,
    private readonly next: Authenticator | undefined,
  ) {}

  async authenticate(token: string): Promise<Principal> {
    if (this.adminToken !== undefined && constantTimeEquals(token, this.adminToken)) return ADMIN;
    if (this.next) return this.next.authenticate(token);
    throw unauthenticated('the token is not valid');
  }
}
