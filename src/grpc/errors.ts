import { fromJson, type DescMessage, type JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import type { Logger } from 'pino';
import { asRpcError, type ErrorDetail, type RpcError } from '../core/rpc-error.js';
import { within } from '../tracing/spans.js';
import { endRpcSpan, rpcCall } from './rpc-span.js';
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
  QuotaFailureSchema,
  ResourceInfoSchema,
  RetryInfoSchema,
} from '../gen/google/rpc/error_details_pb.js';

const DETAIL_SCHEMAS: Record<string, DescMessage> = {
  'type.googleapis.com/google.rpc.ErrorInfo': ErrorInfoSchema,
  'type.googleapis.com/google.rpc.BadRequest': BadRequestSchema,
  'type.googleapis.com/google.rpc.PreconditionFailure': PreconditionFailureSchema,
  'type.googleapis.com/google.rpc.ResourceInfo': ResourceInfoSchema,
  'type.googleapis.com/google.rpc.RetryInfo': RetryInfoSchema,
  'type.googleapis.com/google.rpc.QuotaFailure': QuotaFailureSchema,
};

/** Details whose proto3 JSON is not their message's init shape (a Duration is `"12s"`). */
const FROM_JSON = new Set(['type.googleapis.com/google.rpc.RetryInfo']);

/**
 * The same google.rpc.Status the REST door renders as a body, as a gRPC status: the code,
 * the message and the typed details, which Connect packs into `grpc-status-details-bin`.
 * (The JSON detail shapes are the proto3 JSON of these messages, so they carry over as is.)
 */
export function toConnectError(e: RpcError): ConnectError {
  const details = e.details.map((d: ErrorDetail) => {
    const { '@type': type, ...value } = d;
    const desc = DETAIL_SCHEMAS[type];
    if (desc === undefined) throw new Error(`no schema for error detail ${type}`);
    if (FROM_JSON.has(type)) return { desc, value: fromJson(desc, value as JsonObject) };
    return { desc, value };
  });
  // google.rpc codes are gRPC codes, which are Connect's codes.
  return new ConnectError(e.message, e.code as number as Code, undefined, details);
}

/**
 * The gRPC door's one error path, like requestContext is the REST door's: a service's
 * RpcError leaves with its code and details; Connect's own errors (a message that does
 * not decode, a deadline) pass; anything else is a fault, logged and answered as INTERNAL
 * with nothing of it shown. Shared by the interceptor and the unary fast path.
 */
export function connectErrorOf(
  logger: Logger,
  e: unknown,
  rpc: string,
  requestId?: string,
): ConnectError {
  if (e instanceof ConnectError) return e;
  const withRpc = () => ({
    warn: (o: object, msg: string) => logger.warn({ ...o, rpc, requestId }, msg),
    error: (o: object, msg: string) => logger.error({ ...o, rpc, requestId }, msg),
  });
  return toConnectError(asRpcError(e, withRpc));
}

/**
 * One log line per call. As the REST door does: at LOG_LEVEL=warn (production, the bench)
 * a call that ends well builds no log line at all; pino would only drop it after it was made.
 */
export function logCall(
  logger: Logger,
  rpc: string,
  protocol: string | null,
  code: string,
  started: number,
  requestId?: string,
): void {
  if (logger.isLevelEnabled('info'))
    logger.info(
      { rpc, protocol, code, ms: Math.round((performance.now() - started) * 10) / 10, requestId },
      'rpc',
    );
}

/** {@link connectErrorOf} and {@link logCall} as a Connect interceptor. */
export function errorsAndLogging(logger: Logger): Interceptor {
  return (next) => (req) => {
    const started = performance.now();
    const protocol = req.header.get('content-type')?.startsWith('application/grpc')
      ? 'grpc'
      : 'connect';
    const call = rpcCall(req, headerRecord(req.header), protocol);
    // The whole call in its span: the call's log line too carries its trace id.
    return within(call.span, async () => {
      let code = 'OK';
      let status: Code | 0 = 0;
      try {
        return await next(req);
      } catch (e) {
        const out = connectErrorOf(logger, e, req.url, call.requestId);
        code = Code[out.code];
        status = out.code;
        throw out;
      } finally {
        logCall(
          logger,
          `${req.service.typeName}/${req.method.name}`,
          req.header.get('content-type'),
          code,
          started,
          call.requestId,
        );
        endRpcSpan(call.span, status);
      }
    });
  };
}

/** The headers a span and the request id read, as a plain record (only those: cheap). */
function headerRecord(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['x-request-id', 'traceparent', 'tracestate']) {
    const v = h.get(k);
    if (v !== null) out[k] = v;
  }
  return out;
}
