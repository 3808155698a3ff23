import { generateKeyPairSync } from 'node:crypto';
import test from 'ava';
import {
  SignJWT,
  createLocalJWKSet,
  errors,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  type JWK,
} from 'jose';
import { signJwt, verifyJws, verifyJwt } from '../../src/auth/compact-jws.js';
import { UPSTREAM_ALGORITHMS } from '../../src/resources/sts/security-token-service.js';

const NOW_S = 1_900_000_000;
const at = { currentDate: new Date(NOW_S * 1000) };
const claims = { iss: 'https://issuer.example', sub: 'workload', iat: NOW_S, exp: NOW_S + 600 };

// Every algorithm an upstream issuer may use (and ES512), each signed by jose and verified
// here, and the other way round: the two must agree on every byte that matters.
const ALGS = [...UPSTREAM_ALGORITHMS, 'ES512'];

for (const alg of ALGS) {
  test(`${alg}: jose's token verifies here, this token verifies in jose`, async (t) => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const byJose = await new SignJWT(claims)
      .setProtectedHeader({ alg, kid: 'k1', typ: 'JWT' })
      .sign(privateKey);
    const mine = signJwt({ alg, kid: 'k1', typ: 'JWT' }, claims, privateKey);
    const opts = { algorithms: [alg], issuer: claims.iss, ...at };
    const a = await verifyJwt(byJose, publicKey, opts);
    t.deepEqual(a.payload, claims);
    t.is(a.protectedHeader.kid, 'k1');
    t.deepEqual((await jwtVerify(mine, publicKey, opts)).payload, claims);
    t.deepEqual((await verifyJwt(mine, publicKey, opts)).payload, claims);
  });
}

test('a key set resolves the key by kid; an unknown kid is jose’s JWKSNoMatchingKey', async (t) => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
  const set = createLocalJWKSet({ keys: [jwk] });
  const opts = { algorithms: ['ES256'], ...at };
  const ok = signJwt({ alg: 'ES256', kid: 'k1' }, claims, privateKey);
  t.is((await verifyJwt(ok, set, opts)).payload.sub, 'workload');
  const other = signJwt({ alg: 'ES256', kid: 'k2' }, claims, privateKey);
  await t.throwsAsync(verifyJwt(other, set, opts), { instanceOf: errors.JWKSNoMatchingKey });
});

test('claims are judged as jwtVerify judges them', async (t) => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const sign = (c: Record<string, unknown>, typ?: string) =>
    signJwt({ alg: 'ES256', ...(typ ? { typ } : {}) }, c, privateKey);
  const opts = { algorithms: ['ES256'], clockTolerance: 30, ...at };
  await t.throwsAsync(verifyJwt(sign({ ...claims, exp: NOW_S - 31 }), publicKey, opts), {
    instanceOf: errors.JWTExpired,
  });
  t.truthy(await verifyJwt(sign({ ...claims, exp: NOW_S - 29 }), publicKey, opts), 'skew');
  await t.throwsAsync(verifyJwt(sign({ ...claims, nbf: NOW_S + 60 }), publicKey, opts), {
    instanceOf: errors.JWTClaimValidationFailed,
  });
  const wrongIss = verifyJwt(sign(claims), publicKey, { ...opts, issuer: 'https://other' });
  await t.throwsAsync(wrongIss, { instanceOf: errors.JWTClaimValidationFailed });
  const aud = verifyJwt(sign({ ...claims, aud: 'a' }), publicKey, { ...opts, audience: 'b' });
  await t.throwsAsync(aud, { instanceOf: errors.JWTClaimValidationFailed });
  const missing = verifyJwt(sign({ sub: 'x' }), publicKey, { ...opts, requiredClaims: ['exp'] });
  await t.throwsAsync(missing, { instanceOf: errors.JWTClaimValidationFailed });
  const typ = verifyJwt(sign(claims, 'JWT'), publicKey, { ...opts, typ: 'at+jwt' });
  await t.throwsAsync(typ, { instanceOf: errors.JWTClaimValidationFailed });
  t.truthy(
    await verifyJwt(sign(claims, 'application/at+jwt'), publicKey, { ...opts, typ: 'at+jwt' }),
  );
});

test('forgeries are refused: tampered parts, other keys, none, HMAC, crit, odd encodings', async (t) => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const other = await generateKeyPair('ES256', { extractable: true });
  const token = signJwt({ alg: 'ES256' }, claims, privateKey);
  const [h, p, s] = token.split('.') as [string, string, string];
  const opts = { algorithms: ['ES256', 'RS256'], ...at };
  const refused = (tok: string, e: new (...a: never[]) => Error, why: string) =>
    t.throwsAsync(verifyJwt(tok, publicKey, opts), { instanceOf: e }, why);
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  await refused(
    `${h}.${enc({ ...claims, sub: 'admin' })}.${s}`,
    errors.JWSSignatureVerificationFailed,
    'payload',
  );
  await refused(
    `${h}.${p}.${s.slice(0, -4)}AAAA`,
    errors.JWSSignatureVerificationFailed,
    'signature',
  );
  await refused(`${h}.${p}.${s}AA`, errors.JWSSignatureVerificationFailed, 'signature length');
  await refused(`${h}.${p}.`, errors.JWSSignatureVerificationFailed, 'no signature');
  const byOther = signJwt({ alg: 'ES256' }, claims, other.privateKey);
  await refused(byOther, errors.JWSSignatureVerificationFailed, 'another key');
  await refused(`${enc({ alg: 'none' })}.${p}.`, errors.JOSEAlgNotAllowed, 'alg none');
  await refused(`${enc({ alg: 'HS256' })}.${p}.${s}`, errors.JOSEAlgNotAllowed, 'HMAC');
  await refused(
    `${enc({ alg: 'ES256', crit: ['exp'], exp: 1 })}.${p}.${s}`,
    errors.JWSInvalid,
    'crit',
  );
  await refused(`${h}.${p}.${s}.x`, errors.JWSInvalid, 'four parts');
  await refused(`${h}.${p}=.${s}`, errors.JWSInvalid, 'padding');
  await refused(`${h}.${p}+.${s}`, errors.JWSInvalid, 'base64, not base64url');
  await refused(`${enc([1])}.${p}.${s}`, errors.JWSInvalid, 'a header that is not an object');
  // RS256 named in the header with an EC key: the key decides nothing.
  await refused(`${enc({ alg: 'RS256' })}.${p}.${s}`, errors.JWSInvalid, 'alg against key type');
  // ES256 named with a P-384 key.
  const p384 = await generateKeyPair('ES384', { extractable: true });
  const es256OnP384 = verifyJwt(token, p384.publicKey, opts);
  await t.throwsAsync(es256OnP384, { instanceOf: errors.JWSInvalid }, 'curve');
});

test('RSA keys under 2048 bits are refused, to sign and to verify', async (t) => {
  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
  t.throws(() => signJwt({ alg: 'RS256' }, claims, weak.privateKey), {
    instanceOf: errors.JWSInvalid,
  });
  const strong = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const token = signJwt({ alg: 'RS256' }, claims, strong.privateKey);
  await t.throwsAsync(verifyJws(token, weak.publicKey, ['RS256']), {
    instanceOf: errors.JWSInvalid,
  });
  const ok = await verifyJws(token, strong.publicKey, ['RS256']);
  t.deepEqual(JSON.parse(Buffer.from(ok.payload, 'base64url').toString()), claims);
});

test('a public key does not sign, a private key is not taken to verify', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  t.throws(() => signJwt({ alg: 'ES256' }, claims, publicKey), { instanceOf: errors.JWSInvalid });
  const token = signJwt({ alg: 'ES256' }, claims, privateKey);
  await t.throwsAsync(verifyJws(token, privateKey, ['ES256']), { instanceOf: errors.JWSInvalid });
});

test('ECDSA signatures whose r or s has a leading zero or its high bit set convert both ways', async (t) => {
  // r and s are random: in 600 signatures a component starts with a zero byte (1 in 256)
  // almost surely, and with its high bit set (1 in 2) always.
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const opts = { algorithms: ['ES256'], ...at };
  let leadingZero = 0;
  let verified = 0;
  for (let i = 0; i < 300; i++) {
    const mine = signJwt({ alg: 'ES256' }, { ...claims, jti: String(i) }, privateKey);
    const sig = Buffer.from(mine.split('.')[2]!, 'base64url');
    if (sig[0] === 0 || sig[32] === 0) leadingZero++;
    if ((await jwtVerify(mine, publicKey, opts)).payload.jti === String(i)) verified++;
    const theirs = await new SignJWT({ ...claims, jti: String(i) })
      .setProtectedHeader({ alg: 'ES256' })
      .sign(privateKey);
    if ((await verifyJwt(theirs, publicKey, opts)).payload.jti === String(i)) verified++;
  }
  t.log(`${leadingZero} of 300 had a component with a leading zero byte`);
  t.is(verified, 600);
});
