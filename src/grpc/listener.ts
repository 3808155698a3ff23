import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

import type { Arbor } from '../compose.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../config.js';
import {
  createGrpcHandler,
  type GrpcHandler,
  type NodeHandlerFn,
  type StreamTaker,
} from './grpc-handler.js';
import { SessionBudget, setBudget } from './session-budget.js';
import type { TicketKeyRing } from '../tls-ticket-keys.js';

/** What every HTTP/2 connection opens with (RFC 9113 §3.4); no HTTP/1 request can. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** A connection that has not said which protocol it speaks by then is dropped. */
const SNIFF_TIMEOUT_MS = 10_000;

export interface ListenerOptions {
  /**
   * Serve TLS (PEM key and certificate): ALPN picks `h2` (gRPC, REST over HTTP/2) or
   * `http/1.1`. Without it the port speaks cleartext HTTP/1.1 and HTTP/2 with prior
   * knowledge (h2c), told apart by the HTTP/2 connection preface.
   */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /**
   * With `tls`: the session-ticket keys this process shares with the other workers
   * (src/tls-ticket-keys.ts), and how long a ticket lives; without, Node's own per-process
   * key, which no other worker can open, and its 5-minute tickets.
   */
  tickets?: { ring: TicketKeyRing; lifetimeSeconds: number };
  /**
   * Offered every HTTP/2 stream before the handler is; what it leaves (answers false) the
   * handler gets as a compat request and response, as if it were the only listener.
   */
  streams?: StreamTaker;
  /** Bounds on slow and greedy peers (config.ts); each one left out takes its default. */
  limits?: Partial<HttpLimits>;
}

/**
 * One port for both doors. A TCP server that hands each connection to an HTTP/1.1 or an
 * HTTP/2 server by the protocol it speaks; both run the same handler, which serves gRPC,
 * gRPC-Web and Connect on the API's RPC paths and gives every other request to Koa.
 * Shaped like http.Server where `serve` uses it (listen, close, closeIdleConnections,
 * closeAllConnections, keepAliveTimeout).
 */
export class ArborListener extends net.Server {
  readonly http1: http.Server;
  readonly http2: http2.Http2Server;
  private readonly sockets = new Set<Duplex>();
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly secure: tls.Server | undefined;
  private readonly tickets: TicketKeyRing | undefined;
  /** {@link ListenerOptions.streams}; may be set later (`serve` sets it once the app serves). */
  streams: StreamTaker | undefined;

  constructor(handler: NodeHandlerFn, opts: ListenerOptions = {}) {
    super();
    const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...opts.limits };
    this.http1 = http.createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        // Node's default looks every 30 s, so a short timeout would be noticed only then.
        connectionsCheckingInterval: Math.min(1_000, Math.max(50, limits.headersTimeoutMs / 4)),
      },
      handler as http.RequestListener,
    );
    // This server is never bound: it gets its sockets from us. Node starts tracking
    // connections (and with that the headersTimeout and requestTimeout checks, which
    // answer 408 and close) on 'listening', so without this a half-sent head is held forever.
    this.http1.emit('listening');
    // No 'request' listener on the HTTP/2 server, so Node makes no compat objects for its
    // streams. Each stream is offered to `streams` first, and what it leaves is emitted on a
    // second server that is never bound and holds the handler: Node's compat layer, which
    // listens for 'stream' on a server with a 'request' listener, wraps it there as usual.
    this.http2 = http2.createServer({
      settings: { maxConcurrentStreams: limits.maxConcurrentStreams },
    });
    const compat = http2.createServer({}, handler as (...a: unknown[]) => void);
    this.streams = opts.streams;
    const streamIdleMs = limits.streamIdleMs;
    this.http2.on(
      'stream',
      (stream: http2.ServerHttp2Stream, headers, flags: number, ...raw: unknown[]) => {
        idleOf.get(stream.session!)?.opened(stream);
        // A request still arriving must keep arriving (a GET whose headers end the stream
        // needs no timer). The answer's own pace is the handler's: see onStreamIdle.
        if ((flags & http2.constants.NGHTTP2_FLAG_END_STREAM) === 0)
          stream.setTimeout(streamIdleMs, onStreamIdle);
        // (Node passes the raw header list fourth; the types leave it out.)
        if (this.streams?.(stream, headers) !== true)
          compat.emit('stream', stream, headers, flags, ...raw);
      },
    );
    this.http2.on('session', (s: http2.ServerHttp2Session) => {
      this.sessions.add(s);
      setBudget(s, new SessionBudget(limits.sessionMaxBytes));
      const idle = new SessionIdle(s, limits.sessionIdleMs);
      idleOf.set(s, idle);
      s.once('close', () => {
        this.sessions.delete(s);
        idle.stop();
      });
    });
    // TLS is a tls.Server of our own that is never bound: it takes the raw sockets, does
    // the handshake with ALPN, and hands each secure socket on by the protocol agreed.
    this.secure = opts.tls
      ? tls.createServer({
          key: opts.tls.key,
          cert: opts.tls.cert,
          ALPNProtocols: ['h2', 'http/1.1'],
          // A handshake is part of the head: as slow a peer gets as little time.
          handshakeTimeout: limits.headersTimeoutMs,
          ...this.sessionOptions(opts.tickets?.lifetimeSeconds),
        })
      : undefined;
    const secure = this.secure;
    this.tickets = opts.tickets?.ring;
    if (secure) this.tickets?.install(secure);
    secure?.on('secureConnection', (t: tls.TLSSocket) => this.hand(t, t.alpnProtocol === 'h2'));
    secure?.on('tlsClientError', (_e: Error, t: tls.TLSSocket) => t.destroy());
    this.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      if (secure) secure.emit('connection', socket);
      else sniff(socket, limits.headersTimeoutMs, (h2) => this.hand(socket, h2));
    });
  }

  /**
   * Serve another key and certificate from the next handshake on (rotation); connections
   * already open keep the pair they agreed on. ALPN is the server's and stays as it is.
   * @throws Error on a cleartext listener, or when Node's TLS refuses the pair.
   */
  setSecureContext(pair: { key: string | Buffer; cert: string | Buffer }): void {
    if (!this.secure) throw new Error('this listener serves cleartext: there is no TLS to reload');
    this.secure.setSecureContext({ key: pair.key, cert: pair.cert, ...this.sessionOptions() });
    // Node made a new context, with keys of its own: the shared ones are put back.
    this.tickets?.install(this.secure);
  }

  /**
   * What a resumed session must match: the session id context is Node's hash of the command
   * line unless given, which a worker shares but a reload must not recompute differently,
   * so it is fixed. The lifetime Node keeps across reloads once given.
   */
  private sessionOptions(lifetimeSeconds?: number): tls.TlsOptions {
    return {
      sessionIdContext: 'arbor-api',
      ...(lifetimeSeconds === undefined ? {} : { sessionTimeout: lifetimeSeconds }),
    };
  }

  private hand(socket: Duplex, h2: boolean): void {
    (h2 ? this.http2 : this.http1).emit('connection', socket);
  }

  get keepAliveTimeout(): number {
    return this.http1.keepAliveTimeout;
  }

  set keepAliveTimeout(ms: number) {
    this.http1.keepAliveTimeout = ms;
  }

  /** Stop accepting; HTTP/2 clients get a GOAWAY and their open calls finish. */
  override close(cb?: (err?: Error) => void): this {
    super.close(cb);
    // Stops its connection checks too (and closes its idle keep-alive connections).
    this.http1.close();
    for (const s of this.sessions) s.close();
    return this;
  }

  closeIdleConnections(): void {
    this.http1.closeIdleConnections();
    for (const s of this.sessions) s.close();
  }

  closeAllConnections(): void {
    for (const s of this.sessions) s.destroy();
    for (const socket of this.sockets) socket.destroy();
  }
}

/**
 * A stream whose request stopped arriving for `streamIdleMs` is cancelled: it holds a
 * stream slot and what it sent so far. Once the client has sent all of it (remoteClose), the
 * stream is the handler's, however long it answers (a health Watch streams for hours).
 */
function onStreamIdle(this: http2.ServerHttp2Stream): void {
  if (this.destroyed) return;
  if (this.state.remoteClose === 1) this.setTimeout(0);
  else this.close(http2.constants.NGHTTP2_CANCEL);
}

const idleOf = new WeakMap<http2.Http2Session, SessionIdle>();

/**
 * Closes a session (GOAWAY) that has had no open stream for `ms`. Counted by streams, not
 * by bytes: PINGs or SETTINGS keep no session alive. One timer per session, refreshed.
 */
class SessionIdle {
  private open = 0;
  private readonly timer: NodeJS.Timeout;
  /** One function per session, not per stream, heard on each stream's 'close'. */
  private readonly closed = () => {
    if (--this.open === 0) this.timer.refresh();
  };

  constructor(
    private readonly session: http2.Http2Session,
    ms: number,
  ) {
    this.timer = setTimeout(() => {
      if (this.open === 0 && !session.closed) session.close();
    }, ms).unref();
  }

  opened(stream: http2.ServerHttp2Stream): void {
    this.open++;
    stream.on('close', this.closed);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Read just enough of a cleartext connection to tell HTTP/2 (the preface) from HTTP/1,
 * then put the bytes back and hand the socket on.
 */
function sniff(socket: net.Socket, timeoutMs: number, route: (h2: boolean) => void): void {
  let seen: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), Math.min(SNIFF_TIMEOUT_MS, timeoutMs));
  const onError = () => socket.destroy();
  const onData = (chunk: Buffer) => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, PREFACE.length);
    const h2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (h2 && n < PREFACE.length) return;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('error', onError);
    // Put the bytes back in front. An HTTP/2 session takes what is buffered from the
    // socket itself and then reads the handle natively; the HTTP/1 server listens for
    // 'data', which a paused stream would never emit, hence the resume.
    socket.pause();
    socket.unshift(seen);
    route(h2);
    if (!h2) socket.resume();
  };
  socket.on('data', onData);
  socket.on('error', onError);
  socket.once('close', () => clearTimeout(timer));
}

/**
 * What the one port runs once Arbor is composed: gRPC, gRPC-Web and Connect on the API's
 * RPC paths, Koa (REST) for everything else. Give the listener its `tryStream` too.
 *
 * @example const h = createArborHandler(arbor);
 *   new ArborListener(h, { streams: h.tryStream }).listen(port, host);
 */
export function createArborHandler(arbor: Arbor): GrpcHandler {
  const rest = arbor.rest as unknown as NodeHandlerFn;
  return createGrpcHandler(
    {
      services: arbor.services,
      authenticator: arbor.authenticator,
      sts: arbor.sts,
      oauth: { oauth: arbor.oauth, sessions: arbor.sessions },
      features: arbor.features,
      logger: arbor.logger,
      readMaxBytes: arbor.config.maxBodyBytes,
      healthWatchMax: arbor.config.healthWatchMax,
    },
    rest,
  );
}
