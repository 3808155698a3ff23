import type { IncomingHttpHeaders } from 'node:http2';
import type { DescMethod } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { requestIdOf } from '../core/request-id.js';
import { endServerSpan, startServerSpan, tracingOn, type ServerSpan } from '../tracing/spans.js';

/** One call's request id, and its server span while tracing is on. */
export interface RpcCall {
  requestId: string;
  span: ServerSpan | undefined;
}

/**
 * The RPC server span of a call (semantic conventions, RPC: `{rpc.service}/{rpc.method}`,
 * `rpc.system` grpc or connect_rpc), a child of the caller's `traceparent`. The unary fast
 * path and the Connect interceptor make the same one.
 */
export function rpcCall(
  entry: { method: DescMethod },
  headers: IncomingHttpHeaders | Readonly<Record<string, string>>,
  protocol: string = 'grpc',
): RpcCall {
  const requestId = requestIdOf(headers['x-request-id']);
  // Off, nothing more: not even the span's name is made.
  if (!tracingOn()) return { requestId, span: undefined };
  const service = entry.method.parent.typeName;
  const span = startServerSpan(`${service}/${entry.method.name}`, headers, requestId, () => ({
    'rpc.system': protocol === 'connect' ? 'connect_rpc' : 'grpc',
    'rpc.service': service,
    'rpc.method': entry.method.name,
  }));
  return { requestId, span };
}

/** Codes that are the server's fault: the span's status is an error (semantic conventions). */
const SERVER_FAULTS = new Set<Code>([
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Unimplemented,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
]);

/** Ends the call's span with its status code (0 for OK); nothing when tracing is off. */
export function endRpcSpan(span: ServerSpan | undefined, code: Code | 0): void {
  endServerSpan(span, () => ({ 'rpc.grpc.status_code': code }), SERVER_FAULTS.has(code as Code));
}
