import http from 'node:http';
import http2 from 'node:http2';
import type { Connection, Transport } from './closed-loop.js';

/**
 * The two transports of the closed-loop generator (bench/closed-loop.ts), built alike so
 * that REST and gRPC are loaded the same way: both on Node's own HTTP clients (llhttp,
 * nghttp2), one socket per connection, the request fixed before the run, the whole answer
 * read and never decoded (a client's decode cost is its own, not the server's).
 */

/** REST over HTTP/1.1 keep-alive: a GET of `url`, each connection its own socket. */
export function http1Transport(url: string, headers: Record<string, string>): Transport {
  const u = new URL(url);
  return {
    async connect() {
      // maxSockets 1: this connection's requests all go over one kept-alive socket.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const opts: http.RequestOptions = {
        agent,
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        headers,
      };
      const call = () =>
        new Promise<string | undefined>((resolve, reject) => {
          const req = http.request(opts, (res) => {
            const status = res.statusCode ?? 0;
            res.on('error', reject);
            res.on('end', () =>
              resolve(status >= 200 && status < 300 ? undefined : `HTTP ${status}`),
            );
            res.resume();
          });
          req.on('error', reject);
          req.end();
        });
      const c: Connection = { call, close: () => agent.destroy() };
      const first = await call();
      if (first !== undefined) throw new Error(`GET ${u.pathname}: ${first}`);
      return c;
    },
  };
}

/** A protobuf message as one gRPC length-prefixed frame: uncompressed flag, length, bytes. */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

interface GrpcAnswer {
  /** `grpc-status` from the trailers (or the headers, for a trailers-only answer). */
  status: string | undefined;
  message: string | undefined;
  /** The response frames as received (only when asked to keep them). */
  body: Buffer | undefined;
}

/** One unary call on `session`: POST the frame, read every byte, then the trailers. */
function unary(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  frame: Buffer,
  keep: boolean,
): Promise<GrpcAnswer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    const answer: GrpcAnswer = { status: undefined, message: undefined, body: undefined };
    const chunks: Buffer[] = [];
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) answer.status = String(h['grpc-status']);
      if (h['grpc-message'] !== undefined) answer.message = String(h['grpc-message']);
    };
    stream.on('response', (h) => {
      if (h[':status'] !== 200) answer.message = `HTTP ${h[':status']}`;
      take(h);
    });
    stream.on('trailers', take);
    stream.on('data', (d: Buffer) => {
      if (keep) chunks.push(d);
    });
    stream.on('end', () => {
      if (keep) answer.body = Buffer.concat(chunks);
      resolve(answer);
    });
    stream.on('error', reject);
    stream.end(frame);
  });
}

function failure(a: GrpcAnswer): string | undefined {
  if (a.status === '0') return undefined;
  let message = a.message ?? '';
  try {
    message = decodeURIComponent(message); // grpc-message is percent-encoded
  } catch {
    /* shown as sent */
  }
  return `grpc-status ${a.status ?? 'missing'}${message ? `: ${message}` : ''}`;
}

function open(baseUrl: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.once('connect', () => {
      session.off('error', reject);
      // Failures reach the calls as stream errors; a session error must not crash the run.
      session.on('error', () => undefined);
      resolve(session);
    });
    session.once('error', reject);
  });
}

/**
 * gRPC over HTTP/2 (h2c, prior knowledge, as gRPC clients connect): a unary call of
 * `path` (`/pkg.Service/Method`) with `message` (encoded once, framed once) and
 * `metadata`. A call succeeds when its trailers say `grpc-status: 0`.
 *
 * By default each connection of the load is its own HTTP/2 session with one stream open at
 * a time (shaped like the HTTP/1.1 side). With `shared`, every connection of the load is a
 * stream of one session, as a gRPC channel multiplexes its calls (grpc-js opens one
 * connection per target unless told otherwise).
 */
export function grpcTransport(
  baseUrl: string,
  path: string,
  message: Uint8Array,
  metadata: Record<string, string>,
  opts: { shared?: boolean } = {},
): Transport & { once(): Promise<Uint8Array> } {
  let sharedSession: Promise<http2.ClientHttp2Session> | undefined;
  let users = 0;
  const session = (): Promise<http2.ClientHttp2Session> =>
    opts.shared ? (sharedSession ??= open(baseUrl)) : open(baseUrl);
  const frame = grpcFrame(message);
  const headers: http2.OutgoingHttpHeaders = {
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/grpc+proto',
    te: 'trailers',
    ...metadata,
  };
  return {
    async connect() {
      const s = await session();
      users++;
      const c: Connection = {
        call: async () => failure(await unary(s, headers, frame, false)),
        close: () => {
          // A shared session closes with its last user.
          if (--users === 0 || !opts.shared) s.close();
          if (users === 0) sharedSession = undefined;
        },
      };
      const first = await c.call();
      if (first !== undefined) {
        c.close();
        throw new Error(`${path}: ${first}`);
      }
      return c;
    },
    /** One call with exactly the bytes the load sends: the answer's message, for checks. */
    async once() {
      const session = await open(baseUrl);
      try {
        const a = await unary(session, headers, frame, true);
        const why = failure(a);
        if (why !== undefined) throw new Error(`${path}: ${why}`);
        const body = a.body!;
        if (body.length < 5 || body.readUInt32BE(1) !== body.length - 5)
          throw new Error(`${path}: not one uncompressed message frame (${body.length} bytes)`);
        return new Uint8Array(body.subarray(5));
      } finally {
        session.close();
      }
    },
  };
}
