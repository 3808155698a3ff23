import test from 'ava';
import fc from 'fast-check';
import {
  MAX_CLAIM_DEPTH,
  MAX_CLAIM_NAME_CHARS,
  MAX_CLAIM_VALUE_CHARS,
  MAX_UPSTREAM_CLAIMS,
  MAX_UPSTREAM_CLAIMS_BYTES,
  carriedClaims,
  claimsObject,
  readCarriedClaims,
} from '../../src/auth/upstream-claims.js';

test('carried: scalars kept, bookkeeping dropped, nesting flattened, iss and sub first', (t) => {
  const c = carriedClaims({
    aud: 'https://arbor',
    exp: 2,
    iat: 1,
    nbf: 1,
    jti: 'j',
    act: { sub: 'someone' },
    may_act: { sub: 'x' },
    ref: 'refs/heads/main',
    sub: 'repo:acme/app',
    iss: 'https://token.actions.githubusercontent.com',
    run_attempt: 2,
    private: false,
    groups: ['a'],
    none: null,
    'kubernetes.io': {
      namespace: 'ci',
      serviceaccount: { name: 'builder', deeper: { too: 'deep' } },
    },
  });
  t.deepEqual(
    [...c],
    [
      ['iss', 'https://token.actions.githubusercontent.com'],
      ['sub', 'repo:acme/app'],
      ['ref', 'refs/heads/main'],
      ['run_attempt', 2],
      ['private', false],
      ['kubernetes.io.namespace', 'ci'],
      ['kubernetes.io.serviceaccount.name', 'builder'],
    ],
  );
});

test('carried: a long value is dropped, never cut; a taken dotted name keeps the first', (t) => {
  const c = carriedClaims({
    ref: 'refs/heads/main' + 'x'.repeat(MAX_CLAIM_VALUE_CHARS),
    'a.b': 'literal',
    a: { b: 'nested' },
    ['n'.repeat(MAX_CLAIM_NAME_CHARS + 1)]: 'v',
    // As JSON.parse makes it (an own property), the way a token's payload arrives.
    ...(JSON.parse('{"__proto__": {"polluted": "yes"}}') as object),
  });
  t.false(c.has('ref'));
  t.is(c.get('a.b'), 'literal');
  t.false(c.has('n'.repeat(MAX_CLAIM_NAME_CHARS + 1)));
  t.is(c.get('__proto__.polluted'), 'yes');
  const o = claimsObject(c) as Record<string, unknown>;
  t.is(Object.getPrototypeOf(o), Object.prototype);
  t.is(o.polluted, undefined);
});

test('read: what carriedClaims makes reads back; anything else is malformed (null)', (t) => {
  const c = carriedClaims({ sub: 's', ref: 'r', n: 1 });
  t.deepEqual(readCarriedClaims(JSON.parse(JSON.stringify(claimsObject(c)))), c);
  t.is(readCarriedClaims(undefined), undefined);
  for (const bad of [
    [1],
    'ref',
    null,
    { nested: { a: 1 } },
    { list: ['a'] },
    { long: 'x'.repeat(MAX_CLAIM_VALUE_CHARS + 1) },
    Object.fromEntries(Array.from({ length: MAX_UPSTREAM_CLAIMS + 1 }, (_, i) => [`c${i}`, 1])),
    Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`c${i}`, 'v'.repeat(200)])),
  ])
    t.is(readCarriedClaims(bad), null, JSON.stringify(bad).slice(0, 60));
});

/** JSON values as an upstream token's payload may hold them. */
const payload = fc.dictionary(
  fc.string({ maxLength: 140 }),
  fc.jsonValue({ maxDepth: MAX_CLAIM_DEPTH + 1 }),
  { maxKeys: 120 },
);

/** The value at a dotted name, if the name is a path through the payload's objects. */
function at(o: unknown, parts: string[]): unknown[] {
  if (parts.length === 0) return [o];
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return [];
  const out: unknown[] = [];
  // A name may itself hold dots: try every split.
  for (let i = 1; i <= parts.length; i++) {
    const key = parts.slice(0, i).join('.');
    if (Object.hasOwn(o, key)) out.push(...at((o as Record<string, unknown>)[key], parts.slice(i)));
  }
  return out;
}

test('property: bounded, scalar, read back whole, every value found in the payload unchanged', (t) => {
  fc.assert(
    fc.property(payload, (p) => {
      const c = carriedClaims(p);
      if (c.size > MAX_UPSTREAM_CLAIMS) return false;
      const json = JSON.stringify(claimsObject(c));
      if (Buffer.byteLength(json) > MAX_UPSTREAM_CLAIMS_BYTES) return false;
      const back = readCarriedClaims(JSON.parse(json));
      if (back === null || back === undefined ? c.size > 0 : back.size !== c.size) return false;
      for (const [name, v] of c) {
        if (name.length > MAX_CLAIM_NAME_CHARS) return false;
        if (['aud', 'exp', 'iat', 'nbf', 'jti'].includes(name)) return false;
        if (typeof v === 'string' && v.length > MAX_CLAIM_VALUE_CHARS) return false;
        if (!at(p, name.split('.')).includes(v)) return false;
      }
      return true;
    }),
    { includeErrorInReport: true },
  );
  t.pass();
});
