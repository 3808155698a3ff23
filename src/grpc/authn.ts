import type { HandlerContext } from '@connectrpc/connect';
import { bearerToken, type Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';

/**
 * The caller of an RPC, from its `authorization` metadata (`Bearer <token>`), by the same
 * Authenticator the REST door uses: no principal, no service call.
 *
 * @throws RpcError UNAUTHENTICATED without a valid bearer token.
 */
export function principalOf(authenticator: Authenticator, ctx: HandlerContext): Promise<Principal> {
  return authenticator.authenticate(
    bearerToken(ctx.requestHeader.get('authorization') ?? undefined),
  );
}
