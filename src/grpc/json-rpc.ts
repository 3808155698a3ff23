import type { IncomingHttpHeaders } from 'node:http2';
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
 * Where the unary fast path leaves a call's request headers as Node gave them, so that
 * reading one needs no WHATWG `Headers` copy of all of them (about 3 µs a call).
 */
export const RAW_HEADERS = Symbol('raw request headers');

/** The client's consistency token: from the raw headers when the door left them. */
function requestedToken(ctx: HandlerContext): string | undefined {
  const raw = (ctx as { [RAW_HEADERS]?: IncomingHttpHeaders })[RAW_HEADERS];
  if (raw === undefined) return ctx.requestHeader.get(TOKEN_KEY) ?? undefined;
  const v = raw[TOKEN_KEY];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * `impl` in the request's consistency scope (docs/operations.md, "Read replicas"): the
 * client's `arbor-consistency-token` metadata goes in, and a call whose writes earned a
 * token (only with read replicas configured) answers with it in the response metadata.
 */
export function withConsistencyMetadata(impl: JsonImpl): JsonImpl {
  return (req, ctx) =>
    withConsistency(requestedToken(ctx), async (scope) => {
      const out = await impl(req, ctx);
      if (scope.written !== undefined) ctx.responseHeader.set(TOKEN_KEY, scope.written);
      return out;
    });
}
