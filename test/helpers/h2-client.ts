import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';

/** An HTTP/2 session to `url` (h2c, or TLS trusting `ca`), once the server's SETTINGS came. */
export function connectH2(url: string, ca?: Buffer): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const c = http2.connect(url, ca ? { ca, servername: 'localhost' } : {});
    c.once('error', reject);
    c.once('remoteSettings', () => {
      c.off('error', reject);
      c.on('error', () => undefined);
      resolve(c);
    });
  });
}

/** What a raw HTTP/2 exchange ended with. */
export interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  body: Buffer;
  /** The RST_STREAM code the stream closed with (0: NO_ERROR). */
  rstCode: number;
  /** The gRPC status, from the trailers or (trailers-only) the headers. */
  grpcStatus: number | undefined;
}

/**
 * Send a request on `session` and resolve when its stream closes. With `end: false` the
 * request is left half-sent: only the server can finish it.
 */
export function h2Request(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: Buffer,
  opts: { end?: boolean } = {},
): Promise<H2Answer> {
  return new Promise((resolve) => {
    const req = session.request(headers, { endStream: false });
    let status = 0;
    let head: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => {
      head = h;
      status = Number(h[':status']);
    });
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('close', () => {
      const g = trailers['grpc-status'] ?? head['grpc-status'];
      resolve({
        status,
        headers: head,
        trailers,
        body: Buffer.concat(chunks),
        rstCode: req.rstCode ?? 0,
        grpcStatus: g === undefined ? undefined : Number(g),
      });
    });
    if (body !== undefined) req.write(body);
    if (opts.end !== false) req.end();
  });
}

/** A gRPC length-prefixed message; `declared` overrides the length it claims. */
export function grpcFrame(payload: Uint8Array, declared = payload.length, flags = 0): Buffer {
  const f = Buffer.alloc(5 + payload.length);
  f[0] = flags;
  f.writeUInt32BE(declared, 1);
  f.set(payload, 5);
  return f;
}

/** Resolve `p`, or with `fallback` after `ms` (a bound on a test that must not hang). */
export function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((resolve) => setTimeout(() => resolve(fallback), ms).unref()),
  ]);
}
