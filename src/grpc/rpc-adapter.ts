import { constants, type Http2ServerRequest, type Http2Session } from 'node:http2';
import type { IncomingMessage } from 'node:http';
import type { JsonValue } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createConnectRouter,
  createContextValues,
  type ConnectRouter,
  type ConnectRouterOptions,
  type ContextValues,
} from '@connectrpc/connect';
import type { UniversalHandler } from '@connectrpc/connect/protocol';
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
  type connectNodeAdapter,
} from '@connectrpc/connect-node';
import type { Logger } from 'pino';
import { PRINCIPAL } from './authn.js';
import { BodyCheck } from './body-check.js';
import { connectErrorOf } from './errors.js';
import { budgetOf, overBudget } from './session-budget.js';
import type { CallGate } from './unary-fast-path.js';

export interface RpcAdapterOptions extends ConnectRouterOptions {
  routes: (router: ConnectRouter) => void;
  /** What answers a path no RPC has (the REST door). */
  fallback: NodeHandlerFn;
  gate: CallGate;
  logger: Logger;
  readMaxBytes: number;
}

type NodeRequest = IncomingMessage | Http2ServerRequest;
/** A Node request handler for HTTP/1.1 and HTTP/2 alike (grpc-handler.ts names it too). */
type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;

/**
 * Connect's Node adapter (connectNodeAdapter), with the body in our hands: what Connect
 * reads of a request is what this gives it. A call that needs a principal is authenticated
 * from its headers first, and when that fails Connect is handed a body that fails with
 * UNAUTHENTICATED at its first read, so it answers in the call's own protocol (gRPC,
 * gRPC-Web, Connect) without a byte of the real body read. The body's chunks are counted
 * against the HTTP/2 session's budget and go through {@link BodyCheck}.
 */
export function rpcNodeAdapter(options: RpcAdapterOptions): NodeHandlerFn {
  const { gate, logger, fallback, readMaxBytes } = options;
  const router = createConnectRouter({
    acceptCompression: [compressionGzip, compressionBrotli],
    ...options,
  });
  options.routes(router);
  const paths = new Map<string, UniversalHandler>();
  for (const h of router.handlers) paths.set(h.requestPath, h);

  const serve = (
    req: NodeRequest,
    res: Parameters<NodeHandlerFn>[1],
    h: UniversalHandler,
    values: ContextValues | undefined,
    refused: ConnectError | undefined,
  ) => {
    const body = guardedBody(req, h, refused, readMaxBytes);
    // (Connect's "parsed JSON body" parameter is the body it iterates when given one.)
    const uReq = universalRequestFromNodeRequest(
      req as never,
      res as never,
      body as unknown as JsonValue,
      values,
    );
    h(uReq)
      .then((uRes) => universalResponseToNodeResponse(uRes, res as never))
      .then(() => stopReading(req))
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        logger.error({ err: reason, rpc: h.requestPath }, 'rpc handler failed');
      });
  };

  return ((req: NodeRequest, res: Parameters<NodeHandlerFn>[1]) => {
    const h = paths.get((req.url ?? '').split('?', 1)[0]!);
    if (h === undefined) {
      fallback(req as never, res);
      return;
    }
    if (!gate.needsPrincipal(h.method)) {
      serve(req, res, h, undefined, undefined);
      return;
    }
    gate.authenticate(req.headers, sessionOf(req)).then(
      (p) => serve(req, res, h, createContextValues().set(PRINCIPAL, p as never), undefined),
      (e: unknown) => serve(req, res, h, undefined, connectErrorOf(logger, e, h.requestPath)),
    );
  }) as NodeHandlerFn;
}

/** The request body as Connect gets it (see {@link rpcNodeAdapter}). */
async function* guardedBody(
  req: NodeRequest,
  h: UniversalHandler,
  refused: ConnectError | undefined,
  readMaxBytes: number,
): AsyncGenerator<Uint8Array> {
  if (refused !== undefined) throw refused;
  const stream = 'stream' in req ? req.stream : undefined;
  const budget = budgetOf(stream?.session);
  let taken = 0;
  if (budget !== undefined) stream!.once('close', () => budget.release(taken));
  const check = BodyCheck.of(
    h.method,
    req.headers['content-type'],
    (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    },
    readMaxBytes,
  );
  // Not `for await`: leaving that loop early destroys the request, and with it the
  // HTTP/2 stream the answer is still to be sent on.
  const it = (req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  for (;;) {
    const next = await it.next();
    if (next.done === true) break;
    const chunk = next.value;
    if (budget !== undefined) {
      if (!budget.take(chunk.length)) throw overBudget(budget.max);
      taken += chunk.length;
    }
    check?.push(chunk);
    yield chunk;
  }
  check?.end();
}

/**
 * After an answer given before the whole request came (a refusal), tell an HTTP/2 client
 * to send no more (RST_STREAM NO_ERROR, RFC 9113 §8.1) rather than read it.
 */
function stopReading(req: NodeRequest): void {
  if (!('stream' in req)) return;
  const s = req.stream;
  if (!s.destroyed && s.state.remoteClose !== 1) s.close(constants.NGHTTP2_NO_ERROR);
}

/** The HTTP/2 session of a compat request; an HTTP/1.1 request has none. */
function sessionOf(req: NodeRequest): Http2Session | undefined {
  return (req as { stream?: { session?: Http2Session } }).stream?.session;
}
