import { request } from 'node:http';
import zlib from 'node:zlib';

/** An HTTP answer as it came off the wire: status, headers and the body still encoded. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One request through `node:http`, read whole without decoding: the fast-path parity tests
 * compare what each path put on the wire (content-encoding included). A `body` goes with
 * its Content-Length, or chunked (in two writes, no length) when `chunked`.
 */
export function rawRequest(
  base: string,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  body?: string | Buffer,
  chunked = false,
): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    const h =
      body === undefined || chunked
        ? headers
        : { 'content-length': String(Buffer.byteLength(body)), ...headers };
    const req = request(`${base}${path}`, { method, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    if (body !== undefined && chunked) {
      const b = Buffer.from(body);
      req.write(b.subarray(0, b.length >> 1));
      req.end(b.subarray(b.length >> 1));
    } else req.end(body);
  });
}

/** The body as text, undoing the answer's content-encoding (br, gzip, zstd or none). */
export function decodedBody(r: RawAnswer): string {
  const enc = r.headers['content-encoding'];
  if (enc === 'br') return zlib.brotliDecompressSync(r.body).toString();
  if (enc === 'gzip') return zlib.gunzipSync(r.body).toString();
  if (enc === 'zstd')
    return (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer })
      .zstdDecompressSync(r.body)
      .toString();
  return r.body.toString();
}
