import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

import type { Arbor } from '../compose.js';
import {
  createGrpcHandler,
  type GrpcHandler,
  type NodeHandlerFn,
  type StreamTaker,
} from './grpc-handler.js';

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
   * Offered every HTTP/2 stream before the handler is; what it leaves (answers false) the
   * handler gets as a compat request and response, as if it were the only listener.
   */
  streams?: StreamTaker;
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
  /** {@link ListenerOptions.streams}; may be set later (`serve` sets it once the app serves). */
  streams: StreamTaker | undefined;

  constructor(handler: NodeHandlerFn, opts: ListenerOptions = {}) {
    super();
    this.http1 = http.createServer(handler as http.RequestListener);
    // No 'request' listener on the HTTP/2 server, so Node makes no compat objects for its
    // streams. Each stream is offered to `streams` first, and what it leaves is emitted on a
    // second server that is never bound and holds the handler: Node's compat layer, which
    // listens for 'stream' on a server with a 'request' listener, wraps it there as usual.
    this.http2 = http2.createServer({});
    const compat = http2.createServer({}, handler as (...a: unknown[]) => void);
    this.streams = opts.streams;
    this.http2.on(
      'stream',
      (stream: http2.ServerHttp2Stream, headers, flags, ...raw: unknown[]) => {
        // (Node passes the raw header list fourth; the types leave it out.)
        if (this.streams?.(stream, headers) !== true)
          compat.emit('stream', stream, headers, flags, ...raw);
      },
    );
    this.http2.on('session', (s: http2.ServerHttp2Session) => {
      this.sessions.add(s);
      s.once('close', () => this.sessions.delete(s));
    });
    // TLS is a tls.Server of our own that is never bound: it takes the raw sockets, does
    // the handshake with ALPN, and hands each secure socket on by the protocol agreed.
    this.secure = opts.tls
      ? tls.createServer({
          key: opts.tls.key,
          cert: opts.tls.cert,
          ALPNProtocols: ['h2', 'http/1.1'],
        })
      : undefined;
    const secure = this.secure;
    secure?.on('secureConnection', (t: tls.TLSSocket) => this.hand(t, t.alpnProtocol === 'h2'));
    secure?.on('tlsClientError', (_e: Error, t: tls.TLSSocket) => t.destroy());
    this.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      if (secure) secure.emit('connection', socket);
      else sniff(socket, (h2) => this.hand(socket, h2));
    });
  }

  /**
   * Serve another key and certificate from the next handshake on (rotation); connections
   * already open keep the pair they agreed on. ALPN is the server's and stays as it is.
   * @throws Error on a cleartext listener, or when Node's TLS refuses the pair.
   */
  setSecureContext(pair: { key: string | Buffer; cert: string | Buffer }): void {
    if (!this.secure) throw new Error('this listener serves cleartext: there is no TLS to reload');
    this.secure.setSecureContext({ key: pair.key, cert: pair.cert });
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
 * Read just enough of a cleartext connection to tell HTTP/2 (the preface) from HTTP/1,
 * then put the bytes back and hand the socket on.
 */
function sniff(socket: net.Socket, route: (h2: boolean) => void): void {
  let seen: Buffer = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), SNIFF_TIMEOUT_MS);
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
      logger: arbor.logger,
      readMaxBytes: arbor.config.maxBodyBytes,
    },
    rest,
  );
}
