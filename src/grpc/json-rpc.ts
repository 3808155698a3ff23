import type { DescMethod, JsonValue, Message } from '@bufbuild/protobuf';
import type { ConnectRouter, HandlerContext } from '@connectrpc/connect';
import { CONSISTENCY_HEADER, withConsistency } from '../resources/consistency.js';

/** A unary impl that answers with its output message as proto3 JSON (see proto-json.ts). */
export type JsonImpl = (
  req: Message & Record<string, unknown>,
  ctx: HandlerContext,
) => Promise<JsonValue>;

/**
 * Where the gRPC door mounts its services: Connect's router, which also takes impls that
 * answer in proto3 JSON, the form the REST door's wire mapping gives. Connect reads such an
 * answer into the message; the unary fast path encodes it directly.
 */
export interface GrpcRouter extends ConnectRouter {
  jsonRpc(method: DescMethod, impl: JsonImpl): this;
}

const TOKEN_KEY = CONSISTENCY_HEADER.toLowerCase();

/**
 * `impl` in the request's consistency scope (docs/operations.md, "Read replicas"): the
 * client's `arbor-consistency-token` metadata goes in, and a call whose writes earned a
 * token (only with read replicas configured) answers with it in the response metadata.
 */
export function withConsistencyMetadata(impl: JsonImpl): JsonImpl {
  return (req, ctx) =>
    withConsistency(ctx.requestHeader.get(TOKEN_KEY) ?? undefined, async (scope) => {
      const out = await impl(req, ctx);
      if (scope.written !== undefined) ctx.responseHeader.set(TOKEN_KEY, scope.written);
      return out;
    });
}
