import {
  KeyObject,
  constants,
  sign as cryptoSign,
  verify as cryptoVerify,
  type webcrypto,
} from 'node:crypto';
import {
  UnsecuredJWT,
  errors,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';

/**
 * Compact JWS signing and JWT verification with node:crypto's one-shot `sign` and `verify`,
 * for the paths that do it per request (the STS, the token endpoint, a new token's first
 * use). jose 6 signs and verifies through WebCrypto, whose promise, job and key handling
 * cost 150-250 us of CPU around a 30-80 us signature (bench/jws-probe.ts): a third of an
 * exchange's CPU went there. What is judged does not change: the signature here, then jose's own
 * claim validation (`UnsecuredJWT.decode` runs the same `validateClaimsSet` as
 * `jwtVerify`), and jose's key resolvers (`createLocalJWKSet`) pick the key, so their
 * errors (`JWKSNoMatchingKey`) and jose's claim errors reach callers as before.
 */

type AnyKey = KeyObject | webcrypto.CryptoKey;
/** A key, or a jose key resolver (`createLocalJWKSet`'s function). */
export type VerifyKey =
  AnyKey | ((header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<AnyKey> | AnyKey);

interface Algorithm {
  /** The digest for `crypto.sign` (null: EdDSA, which hashes itself). */
  hash: string | null;
  /** The key types that may sign it, by `KeyObject.asymmetricKeyType`. */
  keyTypes: readonly string[];
  /** EC: the one curve (OpenSSL's name) and the signature's exact length. */
  curve?: string;
  signatureBytes?: number;
  pss?: boolean;
}

const rsa = (bits: 256 | 384 | 512, pss: boolean): Algorithm => ({
  hash: `sha${bits}`,
  keyTypes: pss ? ['rsa', 'rsa-pss'] : ['rsa'],
  pss,
});
const ec = (bits: 256 | 384 | 512, curve: string, signatureBytes: number): Algorithm => ({
  hash: `sha${bits}`,
  keyTypes: ['ec'],
  curve,
  signatureBytes,
});

/** The asymmetric algorithms of RFC 7518 (and EdDSA of RFC 8037); no HMAC, no `none`. */
const ALGORITHMS: Readonly<Record<string, Algorithm>> = {
  RS256: rsa(256, false),
  RS384: rsa(384, false),
  RS512: rsa(512, false),
  PS256: rsa(256, true),
  PS384: rsa(384, true),
  PS512: rsa(512, true),
  ES256: ec(256, 'prime256v1', 64),
  ES384: ec(384, 'secp384r1', 96),
  ES512: ec(512, 'secp521r1', 132),
  EdDSA: { hash: null, keyTypes: ['ed25519', 'ed448'] },
  Ed25519: { hash: null, keyTypes: ['ed25519'] },
};

/** RSA keys shorter than this are refused, as jose refuses them. */
const MIN_RSA_BITS = 2048;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The KeyObject under each CryptoKey, looked up once a key. */
const keyObjects = new WeakMap<webcrypto.CryptoKey, KeyObject>();

function keyObject(key: AnyKey): KeyObject {
  if (key instanceof KeyObject) return key;
  let k = keyObjects.get(key);
  if (k === undefined) keyObjects.set(key, (k = KeyObject.from(key)));
  return k;
}

interface KeyFacts {
  type: string;
  keyType: string;
  curve: string | undefined;
  bits: number;
}

/** What each key is, read once: `asymmetricKeyDetails` builds a new object every read. */
const facts = new WeakMap<KeyObject, KeyFacts>();

function factsOf(key: KeyObject): KeyFacts {
  let f = facts.get(key);
  if (f === undefined) {
    const d = key.asymmetricKeyDetails;
    f = {
      type: key.type,
      keyType: key.asymmetricKeyType ?? '',
      curve: d?.namedCurve,
      bits: d?.modulusLength ?? 0,
    };
    facts.set(key, f);
  }
  return f;
}

/** The algorithm `alg` names, if `key` may be used with it; else JWSInvalid. */
function algorithmFor(alg: string, key: KeyObject, use: 'private' | 'public'): Algorithm {
  const a = Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined;
  if (a === undefined) throw new errors.JOSENotSupported(`unsupported algorithm ${alg}`);
  const f = factsOf(key);
  const fits =
    f.type === use &&
    a.keyTypes.includes(f.keyType) &&
    (a.curve === undefined || f.curve === a.curve) &&
    (!a.keyTypes.includes('rsa') || f.bits >= MIN_RSA_BITS);
  if (!fits) throw new errors.JWSInvalid(`the key does not fit ${alg}`);
  return a;
}

/**
 * What `crypto.sign` and `verify` are given: the KeyObject itself wherever its defaults fit
 * (PKCS #1 v1.5 for RSA, DER for ECDSA), since on Node 24 an options object around the key
 * costs more than the signature it asks for (ES256 signs in 35 us with the bare key, 90
 * with `{ key, dsaEncoding }`: bench/jws-probe.ts). ECDSA's JWS form (r || s) is converted
 * here instead. PSS alone needs the options.
 */
function cryptoKeyInput(a: Algorithm, key: KeyObject) {
  if (!a.pss) return key;
  return {
    key,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  };
}

/** A DER INTEGER of the unsigned big-endian `v`: minimal, positive. */
function derInteger(v: Buffer): Buffer {
  let i = 0;
  while (i < v.length - 1 && v[i] === 0) i++;
  const body = v[i]! & 0x80 ? Buffer.concat([Buffer.of(0), v.subarray(i)]) : v.subarray(i);
  return Buffer.concat([Buffer.of(0x02, body.length), body]);
}

/** JWS's ECDSA signature (r and s, `n` bytes each) as the DER SEQUENCE OpenSSL takes. */
function p1363ToDer(sig: Buffer, n: number): Buffer {
  const body = Buffer.concat([derInteger(sig.subarray(0, n)), derInteger(sig.subarray(n))]);
  const len = body.length < 0x80 ? Buffer.of(body.length) : Buffer.of(0x81, body.length);
  return Buffer.concat([Buffer.of(0x30), len, body]);
}

/** OpenSSL's DER ECDSA signature as JWS's r || s, `n` bytes each. */
function derToP1363(der: Buffer, n: number): Buffer {
  let at = der[1]! & 0x80 ? 3 : 2; // past SEQUENCE and its one- or two-byte length
  const out = Buffer.alloc(2 * n);
  for (const half of [0, 1]) {
    if (der[at] !== 0x02) throw new Error('not a DER ECDSA signature');
    const len = der[at + 1]!;
    let v = der.subarray(at + 2, at + 2 + len);
    at += 2 + len;
    while (v.length > n && v[0] === 0) v = v.subarray(1);
    if (v.length > n) throw new Error('not a DER ECDSA signature');
    v.copy(out, half * n + n - v.length);
  }
  return out;
}

const b64 = (s: string) => Buffer.from(s).toString('base64url');

/**
 * A compact JWS of `payload` under `header` (whose `alg` it must carry), signed with `key`.
 * @throws JOSENotSupported for an algorithm not in the table, JWSInvalid for a key that
 *   does not fit it.
 */
export function signJwt(
  header: JWSHeaderParameters & { alg: string },
  payload: JWTPayload,
  key: AnyKey,
): string {
  const k = keyObject(key);
  const a = algorithmFor(header.alg, k, 'private');
  const input = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`;
  let signature: Buffer = cryptoSign(a.hash, Buffer.from(input), cryptoKeyInput(a, k));
  if (a.signatureBytes !== undefined) signature = derToP1363(signature, a.signatureBytes / 2);
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * The protected header and raw payload of `token` once its signature verifies with `keys`
 * under one of `algorithms`. A `crit` header (no extension is understood) and a non-canonical
 * part are refused.
 * @throws jose's JWSInvalid, JOSEAlgNotAllowed, JWSSignatureVerificationFailed, or what the
 *   key resolver throws (JWKSNoMatchingKey).
 */
export async function verifyJws(
  token: string,
  keys: VerifyKey,
  algorithms: readonly string[],
): Promise<{ header: JWSHeaderParameters; payload: string }> {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => BASE64URL.test(p)))
    throw new errors.JWSInvalid('Invalid Compact JWS');
  const [h, payload, s] = parts as [string, string, string];
  let header: unknown;
  try {
    header = JSON.parse(utf8.decode(Buffer.from(h, 'base64url')));
  } catch {
    throw new errors.JWSInvalid('JWS Protected Header is invalid');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new errors.JWSInvalid('JWS Protected Header is invalid');
  const jh = header as JWSHeaderParameters;
  if (jh.crit !== undefined) throw new errors.JWSInvalid('no critical extension is supported');
  if (typeof jh.alg !== 'string' || !algorithms.includes(jh.alg))
    throw new errors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');
  const key = keyObject(
    typeof keys === 'function' ? await keys(jh, { protected: h, payload, signature: s }) : keys,
  );
  const a = algorithmFor(jh.alg, key, 'public');
  let signature: Buffer = Buffer.from(s, 'base64url');
  let ok = a.signatureBytes === undefined || signature.length === a.signatureBytes;
  try {
    if (ok && a.signatureBytes !== undefined)
      signature = p1363ToDer(signature, a.signatureBytes / 2);
    ok &&= cryptoVerify(a.hash, Buffer.from(`${h}.${payload}`), cryptoKeyInput(a, key), signature);
  } catch {
    ok = false; // OpenSSL refusing the signature's shape is a signature that does not verify
  }
  if (!ok) throw new errors.JWSSignatureVerificationFailed();
  return { header: jh, payload };
}

/**
 * `jose.jwtVerify`'s answer for `token`: the signature by {@link verifyJws}, then the claims
 * by jose's own validation with `options` (issuer, audience, typ, clock tolerance, required
 * claims, current date).
 * @throws as verifyJws, and jose's JWTExpired, JWTClaimValidationFailed, JWTInvalid.
 */
export async function verifyJwt(
  token: string,
  keys: VerifyKey,
  options: JWTVerifyOptions & { algorithms: readonly string[] },
): Promise<{ payload: JWTPayload; protectedHeader: JWSHeaderParameters }> {
  const { header, payload } = await verifyJws(token, keys, options.algorithms);
  // The signature is judged; the claims are jose's to judge, on an unsigned copy whose
  // header carries the one parameter claim validation reads (typ).
  const unsigned = `${b64(JSON.stringify(header.typ === undefined ? { alg: 'none' } : { alg: 'none', typ: header.typ }))}.${payload}.`;
  return { payload: UnsecuredJWT.decode(unsigned, options).payload, protectedHeader: header };
}
