import type { HandlerContext } from '@connectrpc/connect';
import { authenticateRequest, type Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { requestIdOf } from '../core/request-id.js';

/**
 * The caller of an RPC, from its `authorization` metadata (`Bearer <token>`), by the same
 * Authenticator the REST door uses: no principal, no service call. Its changes are audited
 * as through the gRPC door, under the client's `x-request-id` or a fresh one.
 *
 * @throws RpcError UNAUTHENTICATED without a valid bearer token.
 */
export function principalOf(authenticator: Authenticator, ctx: HandlerContext): Promise<Principal> {
  return authenticateRequest(
    authenticator,
    ctx.requestHeader.get('authorization') ?? undefined,
    'grpc',
    requestIdOf(ctx.requestHeader.get('x-request-id')),
  );
}
