import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import {
  authenticateRequest,
  bearerToken,
  tokenDigest,
  type Authenticator,
} from '../auth/authenticator.js';
import { withVia, type Principal } from '../auth/principal.js';
import { requestIdOf } from '../core/request-id.js';

/**
 * Where a door that authenticated a call from its headers, before reading its body, leaves
 * the caller for {@link principalOf}: the RPC adapter in the context values, the unary fast
 * path on its context under {@link PRINCIPAL_FIELD} (no context values made per call).
 */
export const PRINCIPAL = createContextKey<Principal | undefined>(undefined, {
  description: 'the authenticated caller',
});
export const PRINCIPAL_FIELD = Symbol('principal');

/**
 * The caller named by a call's `authorization` metadata (`Bearer <token>`), by the same
 * Authenticator the REST door uses. Its changes are audited as through the gRPC door, under
 * the client's `x-request-id` or a fresh one.
 *
 * @throws RpcError UNAUTHENTICATED without a valid bearer token.
 */
export function authenticateCall(
  authenticator: Authenticator,
  authorization: string | undefined,
  requestId: unknown,
  session?: object,
): Promise<Principal> {
  if (session === undefined || authorization === undefined)
    return authenticateRequest(authenticator, authorization, 'grpc', requestIdOf(requestId));
  return authenticateOnSession(authenticator, authorization, requestIdOf(requestId), session);
}

/** What a session's last `authorization` header gave: its token, digest and fingerprint. */
interface SessionCredential {
  header: string;
  token: string;
  digest: Buffer;
  credential: string;
}

const sessionCredentials = new WeakMap<object, SessionCredential>();

/**
 * As authenticateRequest, with the parsing and hashing of the header done once per HTTP/2
 * session while its calls send the same header (a channel sends the same credentials on
 * every call). Only that is remembered: the token itself is authenticated on every call,
 * so an expired token fails and its use is recorded, as on any other call.
 */
async function authenticateOnSession(
  authenticator: Authenticator,
  authorization: string,
  requestId: string,
  session: object,
): Promise<Principal> {
  let c = sessionCredentials.get(session);
  if (c === undefined || c.header !== authorization) {
    const token = bearerToken(authorization);
    const digest = tokenDigest(token);
    c = { header: authorization, token, digest, credential: digest.toString('hex', 0, 8) };
    sessionCredentials.set(session, c);
  }
  return withVia(await authenticator.authenticate(c.token, c.digest), {
    door: 'grpc',
    requestId,
    credential: c.credential,
  });
}

/**
 * The caller of an RPC: the one the door authenticated before reading the body, or else
 * from its metadata ({@link authenticateCall}): no principal, no service call.
 *
 * @throws RpcError UNAUTHENTICATED without a valid bearer token.
 */
export function principalOf(authenticator: Authenticator, ctx: HandlerContext): Promise<Principal> {
  const known =
    (ctx as { [PRINCIPAL_FIELD]?: Principal })[PRINCIPAL_FIELD] ?? ctx.values.get(PRINCIPAL);
  if (known !== undefined) return Promise.resolve(known);
  return authenticateCall(
    authenticator,
    ctx.requestHeader.get('authorization') ?? undefined,
    ctx.requestHeader.get('x-request-id'),
  );
}
