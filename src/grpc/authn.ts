import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import { authenticateRequest, type Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
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
): Promise<Principal> {
  return authenticateRequest(authenticator, authorization, 'grpc', requestIdOf(requestId));
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
