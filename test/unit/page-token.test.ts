import { randomBytes } from 'node:crypto';
import test from 'ava';
import { PAGE_TOKEN_TTL_MS, PageTokenCodec, queryFingerprint } from '../../src/core/page-token.js';
import { RpcError } from '../../src/core/rpc-error.js';

const secret = randomBytes(32);

test('page token: round-trips a position for the same query', (t) => {
  const codec = new PageTokenCodec(secret);
  const token = codec.encode({ query: 'q1', key: ['name', 'uid'] });
  t.deepEqual(codec.decode(token, 'q1'), {
    kind: 'position',
    position: { query: 'q1', key: ['name', 'uid'] },
  });
});

test('page token: is opaque (no key material in clear text)', (t) => {
  const codec = new PageTokenCodec(secret);
  const token = codec.encode({ query: 'q1', key: ['secret-name', 'uid'] });
  t.false(Buffer.from(token, 'base64url').toString('latin1').includes('secret-name'));
});

test('page token: a token for another query is INVALID_ARGUMENT', (t) => {
  const codec = new PageTokenCodec(secret);
  const token = codec.encode({ query: 'q1', key: ['x'] });
  const e = t.throws(() => codec.decode(token, 'q2'), { instanceOf: RpcError });
  t.is(e?.code, 3);
});

test('page token: any flipped bit or foreign secret is refused', (t) => {
  const codec = new PageTokenCodec(secret);
  const token = codec.encode({ query: 'q1', key: ['x'] });
  const raw = Buffer.from(token, 'base64url');
  for (const i of [0, 13, raw.length - 1]) {
    const tampered = Buffer.from(raw);
    tampered[i] = (tampered[i] ?? 0) ^ 1;
    t.throws(() => codec.decode(tampered.toString('base64url'), 'q1'), { instanceOf: RpcError });
  }
  t.throws(() => new PageTokenCodec(randomBytes(32)).decode(token, 'q1'), { instanceOf: RpcError });
  t.throws(() => codec.decode('not-a-token', 'q1'), { instanceOf: RpcError });
});

test('page token: expires after three days and then restarts instead of failing', (t) => {
  let now = 1_000_000;
  const codec = new PageTokenCodec(secret, () => now);
  const token = codec.encode({ query: 'q1', key: ['x'] });
  now += PAGE_TOKEN_TTL_MS - 1;
  t.is(codec.decode(token, 'q1').kind, 'position');
  now += 2;
  t.deepEqual(codec.decode(token, 'q1'), { kind: 'expired' });
});

test('page token: fingerprints ignore key order but not values', (t) => {
  t.is(queryFingerprint({ a: 1, b: 2 }), queryFingerprint({ b: 2, a: 1 }));
  t.not(queryFingerprint({ a: 1 }), queryFingerprint({ a: 2 }));
});

test('page token: carries the total of the first page, and only digits', (t) => {
  const codec = new PageTokenCodec(secret);
  const token = codec.encode({ query: 'q1', key: ['x'], total: '120' });
  t.deepEqual(codec.decode(token, 'q1'), {
    kind: 'position',
    position: { query: 'q1', key: ['x'], total: '120' },
  });
});
