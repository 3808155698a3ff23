import {
  constants,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import { create, isMessage, toBinary, type DescMethod, type JsonValue } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createContextValues,
  type ConnectRouter,
  type ContextValues,
  type HandlerContext,
  type MethodImpl,
} from '@connectrpc/connect';
import { setTrailerStatus } from '@connectrpc/connect/protocol-grpc';
import type { Logger } from 'pino';
import { PRINCIPAL_FIELD } from './authn.js';
import { connectErrorOf, logCall } from './errors.js';
import { RAW_HEADERS, withConsistencyMetadata, type GrpcRouter } from './json-rpc.js';
import { compressedWithoutEncoding, parseMessage } from './parse-errors.js';
import { messageOfJson, writeDirectly } from './proto-json.js';
import { budgetOf, overBudget } from './session-budget.js';
import { endRpcSpan, rpcCall, type RpcCall } from './rpc-span.js';
import { within } from '../tracing/spans.js';

/**
 * Why: Connect serves a unary gRPC call through a per-call async-iterable pipeline, a
 * linked AbortController pair and several Headers copies, on top of Node's HTTP/2
 * compatibility request and response; for small messages that costs several times what
 * the service call does. This serves the plain gRPC protocol's unary calls of the API
 * services on the raw HTTP/2 stream, before any compat object exists: read one
 * uncompressed frame, call the very impl Connect holds (recorded when it was mounted),
 * answer one frame and `grpc-status`. Errors take the interceptor's path
 * ({@link connectErrorOf}) and Connect's trailer encoder.
 *
 * Not handled here, left to Connect (`tryStream` answers false): HTTP/1.1, gRPC-Web, the
 * Connect protocol, streaming methods, health, reflection, a compressed request
 * (`grpc-encoding` other than identity), a deadline (`grpc-timeout`). Answers are never
 * compressed (Connect would gzip large ones for a client that accepts it).
 */
export interface FastPathStats {
  /** Calls answered here, not by Connect. */
  served: number;
  /** Answers in JSON the direct writer left, made into a message to be encoded. */
  viaMessage: number;
}

interface Entry {
  method: DescMethod;
  impl: (req: unknown, ctx: HandlerContext) => unknown;
  path: string;
  /** `<service>/<method>`, as the call log names it (made once, not per call). */
  rpc: string;
  /** The impl answers in proto3 JSON (GrpcRouter#jsonRpc), not with a message. */
  json: boolean;
  /**
   * The answer frame of a frozen answer: one a read cache shares between calls (a cached
   * Get, wire/made-once.ts), encoded once and sent as the same bytes to every caller, as a
   * cached REST Get sends its JSON made once.
   */
  frames: WeakMap<object, Buffer>;
}

const CONTENT_TYPE = 'application/grpc+proto';

/** Who must be authenticated before their body is read, and how (authn.ts). */
export interface CallGate {
  needsPrincipal(method: DescMethod): boolean;
  /**
   * `session`: the call's HTTP/2 session, over which a client sends the same credentials
   * call after call (authn.ts remembers what it made of them once per session).
   * @throws RpcError UNAUTHENTICATED
   */
  authenticate(h: IncomingHttpHeaders, session: Http2Session | undefined): Promise<unknown>;
}

export class UnaryFastPath {
  readonly stats: FastPathStats = { served: 0, viaMessage: 0 };
  private readonly methods = new Map<string, Entry>();

  constructor(
    private readonly logger: Logger,
    private readonly readMaxBytes: number,
    private readonly gate: CallGate,
  ) {}

  /**
   * `router`, recording every unary method mounted through it, and taking impls that answer
   * in proto3 JSON: Connect gets such an impl with the answer read as the message.
   */
  recording(router: ConnectRouter): GrpcRouter {
    const record = (method: DescMethod, impl: Entry['impl'], json: boolean) => {
      const path = `/${method.parent.typeName}/${method.name}`;
      const rpc = `${method.parent.typeName}/${method.name}`;
      this.methods.set(path, { method, impl, path, rpc, json, frames: new WeakMap() });
    };
    const rec: GrpcRouter = {
      get handlers() {
        return router.handlers;
      },
      service(service, impl, options) {
        for (const m of service.methods) {
          const fn = (impl as Record<string, unknown>)[m.localName];
          if (m.methodKind === 'unary' && typeof fn === 'function')
            record(m, (fn as Entry['impl']).bind(impl), false);
        }
        router.service(service, impl, options);
        return rec;
      },
      rpc(method, impl, options) {
        if (method.methodKind === 'unary') record(method, impl as unknown as Entry['impl'], false);
        router.rpc(method, impl as MethodImpl<typeof method>, options);
        return rec;
      },
      jsonRpc(method, plain) {
        const impl = withConsistencyMetadata(plain);
        record(method, impl as Entry['impl'], true);
        const asMessage = async (req: unknown, ctx: HandlerContext) =>
          messageOfJson(method.output, await impl(req as never, ctx));
        router.rpc(method, asMessage as unknown as MethodImpl<typeof method>);
        return rec;
      },
    };
    return rec;
  }

  /**
   * Serve the HTTP/2 `stream` if it is a call this path takes; false leaves it untouched
   * (no listener added, no byte read) for the request handler.
   */
  tryStream(stream: ServerHttp2Stream, h: IncomingHttpHeaders): boolean {
    if (h[':method'] !== 'POST') return false;
    const ct = h['content-type'];
    if (ct !== 'application/grpc' && ct !== CONTENT_TYPE) return false;
    const enc = h['grpc-encoding'];
    if ((enc !== undefined && enc !== 'identity') || h['grpc-timeout'] !== undefined) return false;
    const entry = this.methods.get(h[':path'] ?? '');
    if (entry === undefined) return false;
    this.stats.served++;
    // A reset or a broken session also reaches the stream as 'error'; the call just ends
    // (its 'close' cancels it), as the compat request swallows it too. Unheard, it would
    // be thrown.
    stream.on('error', ignore);
    const call = rpcCall(entry, h);
    within(call.span, () => {
      if (this.gate.needsPrincipal(entry.method)) {
        // From the headers, before a byte of the body is read: an anonymous caller makes
        // the server hold nothing.
        void this.gate.authenticate(h, stream.session).then(
          (principal) => this.read(stream, h, entry, principal, call),
          (e: unknown) => {
            const err = connectErrorOf(this.logger, e, entry.path, call.requestId);
            endRpcSpan(call.span, err.code);
            refuse(stream, err);
          },
        );
      } else this.read(stream, h, entry, undefined, call);
    });
    return true;
  }

  private read(
    stream: ServerHttp2Stream,
    h: IncomingHttpHeaders,
    entry: Entry,
    principal: unknown,
    call: RpcCall,
  ): void {
    if (stream.destroyed) {
      endRpcSpan(call.span, Code.Canceled);
      return;
    }
    const max = this.readMaxBytes;
    const budget = budgetOf(stream.session);
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    let declared = -1;
    const fail = (e: ConnectError) => {
      failed = true;
      endRpcSpan(call.span, e.code);
      chunks.length = 0;
      stream.removeListener('data', onData);
      refuse(stream, e);
    };
    const onData = (chunk: Buffer) => {
      if (budget !== undefined && !budget.take(chunk.length)) {
        fail(overBudget(budget.max));
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      // Connect's check: the frame's declared length against readMaxBytes.
      if (declared < 0 && size >= 5) {
        declared = frameLength(chunks, size);
        if (declared > max) {
          fail(
            new ConnectError(
              `message size ${declared} is larger than configured readMaxBytes ${max}`,
              Code.ResourceExhausted,
            ),
          );
          return;
        }
      }
      // A frame takes no more than it declares: once the prefix of a second message is
      // here, the call is refused, whatever that message claims to hold.
      if (declared >= 0 && size >= declared + 10) fail(extraMessage(entry.method, chunks, size));
    };
    if (budget !== undefined) stream.once('close', () => budget.release(size));
    stream.on('data', onData);
    stream.once('end', () => {
      if (failed) return;
      let input: unknown;
      try {
        input = parseSingle(entry.method, Buffer.concat(chunks, size));
      } catch (e) {
        endRpcSpan(call.span, (e as ConnectError).code);
        respondError(stream, e as ConnectError, undefined);
        return;
      }
      void within(call.span, () => this.invoke(stream, h, entry, input, principal, call));
    });
  }

  /** The answer's one message frame; a frozen (shared) answer's is made once (Entry.frames). */
  private frame(entry: Entry, out: unknown): Buffer {
    if (typeof out !== 'object' || out === null || !Object.isFrozen(out))
      return frameOf(this.encode(entry, out));
    let frame = entry.frames.get(out);
    if (frame === undefined) {
      frame = frameOf(this.encode(entry, out));
      entry.frames.set(out, frame);
    }
    return frame;
  }

  /** The impl's answer as the output message's bytes, as Connect would encode it. */
  private encode(entry: Entry, out: unknown): Uint8Array {
    const schema = entry.method.output;
    if (entry.json) {
      const direct = writeDirectly(schema, out as JsonValue);
      if (direct !== undefined) return direct;
      this.stats.viaMessage++;
      return toBinary(schema, messageOfJson(schema, out as JsonValue));
    }
    return toBinary(schema, isMessage(out, schema) ? out : create(schema, out as never));
  }

  private async invoke(
    stream: ServerHttp2Stream,
    h: IncomingHttpHeaders,
    entry: Entry,
    input: unknown,
    principal: unknown,
    call: RpcCall,
  ): Promise<void> {
    const started = performance.now();
    let status = 0;
    const ctx = new CallContext(entry, h, principal);
    let done = false;
    const onClose = () => {
      if (!done) ctx.cancel();
    };
    stream.once('close', onClose);
    let code = 'OK';
    try {
      const out = await entry.impl(input, ctx);
      const frame = this.frame(entry, out);
      done = true;
      stream.removeListener('close', onClose);
      respondOk(stream, frame, ctx);
    } catch (e) {
      const err = connectErrorOf(this.logger, e, entry.path, call.requestId);
      code = Code[err.code];
      status = err.code;
      done = true;
      stream.removeListener('close', onClose);
      respondError(stream, err, ctx);
    } finally {
      logCall(this.logger, entry.rpc, h['content-type'] ?? null, code, started, call.requestId);
      endRpcSpan(call.span, status);
    }
  }
}

/**
 * The context a call's impl gets. Its request headers (as WHATWG Headers), AbortController,
 * response headers and trailers and context values are made only when asked for: an impl
 * whose caller was authenticated from the raw headers reads none of them, and each is an
 * allocation on every call (the request Headers about 3 µs: one validated append per field).
 */
class CallContext implements HandlerContext {
  readonly method: DescMethod;
  readonly service: DescMethod['parent'];
  readonly url: string;
  readonly requestMethod = 'POST';
  readonly protocolName = 'grpc';
  #ac: AbortController | undefined;
  #cancelled = false;
  #values: ContextValues | undefined;
  #header: Headers | undefined;
  #trailer: Headers | undefined;
  #requestHeader: Headers | undefined;
  /** The caller, when it was authenticated before the body was read (authn.ts). */
  readonly [PRINCIPAL_FIELD]: unknown;
  /** The request headers as Node gave them (json-rpc.ts reads the consistency token here). */
  readonly [RAW_HEADERS]: IncomingHttpHeaders;

  constructor(
    entry: Entry,
    private readonly rawHeaders: IncomingHttpHeaders,
    principal: unknown,
  ) {
    this[PRINCIPAL_FIELD] = principal;
    this[RAW_HEADERS] = rawHeaders;
    this.method = entry.method;
    this.service = entry.method.parent;
    this.url = entry.path;
  }

  get requestHeader(): Headers {
    return (this.#requestHeader ??= headersOf(this.rawHeaders));
  }

  timeoutMs(): undefined {
    return undefined;
  }

  get signal(): AbortSignal {
    if (this.#ac === undefined) {
      this.#ac = new AbortController();
      if (this.#cancelled) this.#ac.abort(canceled());
    }
    return this.#ac.signal;
  }

  /** The client went away before the answer: an impl that listens is told. */
  cancel(): void {
    this.#cancelled = true;
    this.#ac?.abort(canceled());
  }

  get values(): ContextValues {
    return (this.#values ??= createContextValues());
  }

  get responseHeader(): Headers {
    return (this.#header ??= new Headers());
  }

  get responseTrailer(): Headers {
    return (this.#trailer ??= new Headers());
  }

  /** What the impl set, without making the Headers it did not. */
  get setHeader(): Headers | undefined {
    return this.#header;
  }

  get setTrailer(): Headers | undefined {
    return this.#trailer;
  }
}

function canceled(): ConnectError {
  return new ConnectError('operation was aborted', Code.Canceled);
}

/** The big-endian length of the frame starting the buffered body (`size` ≥ 5). */
function frameLength(chunks: Buffer[], size: number): number {
  const first = chunks[0]!;
  return (first.length >= 5 ? first : Buffer.concat(chunks, size)).readUInt32BE(1);
}

/** Exactly one uncompressed message, with Connect's codes and messages for what is not. */
function parseSingle(method: DescMethod, body: Buffer): unknown {
  if (body.length === 0)
    throw new ConnectError(
      'protocol error: missing input message for unary method',
      Code.Unimplemented,
    );
  if (body.length < 5)
    throw new ConnectError('protocol error: incomplete envelope', Code.InvalidArgument);
  const len = body.readUInt32BE(1);
  const end = 5 + len;
  if (body.length < end)
    throw new ConnectError('protocol error: incomplete envelope', Code.InvalidArgument);
  const msg = parseFirst(method, body, end);
  // In Connect's order: the first message is read and parsed before a second is looked for.
  if (body.length > end) {
    const rest = body.length - end;
    if (rest < 5 || rest < 5 + body.readUInt32BE(end + 1))
      throw new ConnectError('protocol error: incomplete envelope', Code.InvalidArgument);
    throw new ConnectError(
      'protocol error: received extra input message for unary method',
      Code.Unimplemented,
    );
  }
  return msg;
}

/**
 * The first message of `body` (which holds all of it, to `end`). A compressed flag without
 * an encoding and bytes that are not the input message are the caller's fault:
 * INVALID_ARGUMENT (Connect says INTERNAL; its path is mended in rpc-adapter.ts).
 */
function parseFirst(method: DescMethod, body: Buffer, end: number): unknown {
  if ((body[0]! & 1) === 1) throw compressedWithoutEncoding();
  return parseMessage(method, body.subarray(5, end));
}

/** A second message's prefix came: the first one's fault if it does not parse, else this. */
function extraMessage(method: DescMethod, chunks: Buffer[], size: number): ConnectError {
  const body = Buffer.concat(chunks, size);
  try {
    parseFirst(method, body, 5 + body.readUInt32BE(1));
  } catch (e) {
    return e as ConnectError;
  }
  return new ConnectError(
    'protocol error: received extra input message for unary method',
    Code.Unimplemented,
  );
}

function frameOf(bytes: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + bytes.length);
  frame[0] = 0;
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  return frame;
}

function ignore(): void {}

function headersOf(node: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const k in node) {
    if (k.charCodeAt(0) === 58 /* : */) continue;
    const v = node[k];
    if (typeof v === 'string') out.append(k, v);
    else if (Array.isArray(v)) for (const x of v) out.append(k, x);
  }
  return out;
}

type Fields = Record<string, string | string[]>;

function fieldsOf(target: Fields, h: Headers | undefined): Fields {
  h?.forEach((v, k) => {
    target[k] = v;
  });
  return target;
}

function gone(stream: ServerHttp2Stream): boolean {
  return stream.destroyed || stream.closed || stream.headersSent;
}

/** Headers, the one message frame, then the trailers with the status when nghttp2 asks. */
function respondOk(stream: ServerHttp2Stream, frame: Buffer, ctx: CallContext): void {
  if (gone(stream)) return;
  const trailers = fieldsOf({ 'grpc-status': '0' }, ctx.setTrailer);
  stream.respond(fieldsOf({ ':status': '200', 'content-type': CONTENT_TYPE }, ctx.setHeader), {
    waitForTrailers: true,
  });
  stream.once('wantTrailers', () => {
    if (!stream.destroyed) stream.sendTrailers(trailers);
  });
  stream.end(frame);
}

/**
 * Answer `err` and stop the request where it is: RST_STREAM(NO_ERROR) after the answer
 * tells the client to send no more of its body (RFC 9113 §8.1), so nothing more is read.
 */
function refuse(stream: ServerHttp2Stream, err: ConnectError): void {
  respondError(stream, err, undefined);
  if (!stream.destroyed) stream.close(constants.NGHTTP2_NO_ERROR);
}

/** A trailers-only response: the status in the one HEADERS frame, which ends the stream. */
function respondError(
  stream: ServerHttp2Stream,
  err: ConnectError,
  ctx: CallContext | undefined,
): void {
  if (gone(stream)) return;
  const head: Fields = { ':status': '200', 'content-type': CONTENT_TYPE };
  if (ctx) {
    fieldsOf(head, ctx.setHeader);
    fieldsOf(head, ctx.setTrailer);
  }
  fieldsOf(head, setTrailerStatus(new Headers(), err));
  stream.respond(head, { endStream: true });
}
