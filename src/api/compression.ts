import { promisify } from 'node:util';
import zlib from 'node:zlib';
import Negotiator from 'negotiator';

/**
 * How the REST door compresses, in one place for both of its paths: Koa's (koa-compress
 * takes these options) and the fast reads' (which compress a finished answer in one shot).
 * Large answers (lists) only; brotli at a quality that costs about what gzip does.
 */
export const COMPRESSION = {
  threshold: 1024,
  br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
  gzip: { level: 6 },
  deflate: false,
} as const;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
// Node 22.15+ only; typed loosely so that Node 20's types build too.
const zstdCompress = (
  zlib as { zstdCompress?: (b: Buffer, cb: (e: Error | null, r: Buffer) => void) => void }
).zstdCompress;
const zstd = zstdCompress === undefined ? undefined : promisify(zstdCompress);
const zstdSync = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;

/**
 * Answers smaller than this are compressed on the event loop. zlib's asynchronous one-shot
 * call costs 100–200 µs of CPU per answer in stream and thread-pool machinery, where the
 * synchronous one takes 25–50 µs for a 1–9 KB answer (measured with process.cpuUsage on a
 * registry token and a 50-row list page): for these sizes the work is smaller than the
 * hand-off. Larger answers still go to the thread pool, so no answer blocks the loop long.
 * Both calls give the same bytes (same zlib, same settings).
 */
export const SYNC_COMPRESS_BELOW = 64 * 1024;

/** koa-compress's order of preference; zstd only where this Node's zlib has it. */
const PREFERENCE = ['zstd', 'br', 'gzip', 'deflate', 'identity'] as const;
type Encoding = 'zstd' | 'br' | 'gzip';

const OFFERED: readonly string[] = PREFERENCE.filter(
  (e) => (e !== 'zstd' || zstd !== undefined) && e !== 'deflate',
);

/**
 * The encoding koa-compress would choose for an answer of `bytes` bytes to a request with
 * this `Accept-Encoding`, or undefined for none: below the threshold, no header (koa-compress
 * defaults to identity), `*` (gzip), or nothing acceptable but identity.
 */
export function encodingFor(
  acceptEncoding: string | undefined,
  bytes: number,
): Encoding | undefined {
  if (bytes < COMPRESSION.threshold || !acceptEncoding) return undefined;
  const header = acceptEncoding === '*' ? 'gzip' : acceptEncoding;
  const chosen = new Negotiator({ headers: { 'accept-encoding': header } }).encoding(OFFERED, {
    preferred: PREFERENCE,
  });
  return chosen === 'zstd' || chosen === 'br' || chosen === 'gzip' ? chosen : undefined;
}

/** `body` compressed as koa-compress would (same codec and settings), in one shot. */
export function compress(body: Buffer, encoding: Encoding): Promise<Buffer> {
  if (body.length < SYNC_COMPRESS_BELOW) {
    if (encoding === 'br')
      return Promise.resolve(
        zlib.brotliCompressSync(body, { params: { ...COMPRESSION.br.params } }),
      );
    if (encoding === 'gzip') return Promise.resolve(zlib.gzipSync(body, { ...COMPRESSION.gzip }));
    if (zstdSync !== undefined) return Promise.resolve(zstdSync(body));
  }
  if (encoding === 'br') return brotli(body, { params: { ...COMPRESSION.br.params } });
  if (encoding === 'gzip') return gzip(body, { ...COMPRESSION.gzip });
  // encodingFor offers zstd only where zlib has it.
  return zstd!(body);
}
