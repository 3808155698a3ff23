import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable, Writable } from 'node:stream';
import zlib from 'node:zlib';
import test from 'ava';
import { COMPRESSION, SYNC_COMPRESS_BELOW, compress } from '../../src/api/compression.js';

/** What koa-compress sends for `body`: its stream of the codec, with the same options. */
async function streamed(body: Buffer, encoding: 'gzip' | 'br'): Promise<Buffer> {
  const codec =
    encoding === 'gzip'
      ? zlib.createGzip({ ...COMPRESSION.gzip })
      : zlib.createBrotliCompress({ params: { ...COMPRESSION.br.params } });
  const out: Buffer[] = [];
  await pipeline(
    Readable.from([body]),
    codec,
    new Writable({
      write(chunk: Buffer, _e, done) {
        out.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(out);
}

/** JSON-like text (compressible) with some noise, of about `n` bytes. */
function answerOf(n: number): Buffer {
  const row = () => `{"uid":"${randomBytes(20).toString('hex')}","name":"team","description":""},`;
  let s = '[';
  while (s.length < n) s += row();
  return Buffer.from(`${s.slice(0, -1)}]`);
}

// The fast path compresses small answers on the event loop and large ones on the thread
// pool: both must be the bytes koa-compress streams, or a client could tell.
for (const size of [1_100, 8_000, SYNC_COMPRESS_BELOW - 1, SYNC_COMPRESS_BELOW + 10_000])
  for (const encoding of ['gzip', 'br'] as const)
    test(`compress: ${encoding} of ${size} bytes is koa-compress's stream, byte for byte`, async (t) => {
      const body = answerOf(size);
      t.deepEqual(await compress(body, encoding), await streamed(body, encoding));
    });
