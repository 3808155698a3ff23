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

test('page token: the same position within a second takes the same token, then a fresh one', (t) => {
  let now = 5_000_000;
  const codec = new PageTokenCodec(secret, () => now);
  const first = codec.encode({ query: 'q1', key: ['x'], total: '3', view: 'v1' });
  now += 999;
  t.is(codec.encode({ query: 'q1', key: ['x'], total: '3', view: 'v1' }), first);
  // Any other position, total or view is its own token.
  t.not(codec.encode({ query: 'q1', key: ['y'], total: '3', view: 'v1' }), first);
  t.not(codec.encode({ query: 'q1', key: ['x'], total: '4', view: 'v1' }), first);
  t.not(codec.encode({ query: 'q1', key: ['x'], total: '3', view: 'v2' }), first);
  now += 1;
  const later = codec.encode({ query: 'q1', key: ['x'], total: '3', view: 'v1' });
  t.not(later, first);
  // Both decode to the position; the reused one expires at most a second early.
  t.deepEqual(codec.decode(first, 'q1'), codec.decode(later, 'q1'));
});

test('page token: fresh tokens never share an IV', (t) => {
  const codec = new PageTokenCodec(secret);
  const ivs = new Set<string>();
  for (let i = 0; i < 600; i++) {
    const raw = Buffer.from(codec.encode({ query: 'q', key: [String(i)] }), 'base64url');
    ivs.add(raw.subarray(0, 12).toString('hex'));
  }
  t.is(ivs.size, 600);
});
