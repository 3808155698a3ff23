import type { DescMethod, JsonValue, Message } from '@bufbuild/protobuf';
import type { ConnectRouter, HandlerContext } from '@connectrpc/connect';

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
