import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from 'node:crypto';

/** One data-encryption key: 32 bytes for AES-256-GCM, and the id that names it. */
export interface SecretKey {
  kid: string;
  key: Buffer;
}

const PREFIX = 'arbor-secret:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key's id: a hash of the key, so the same key has the same id on every replica. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update('arbor-secret-key\0').update(key).digest('hex').slice(0, 16);
}

/**
 * Seals secrets for storage (AES-256-GCM) and opens them again. The sealed text is
 * `arbor-secret:v1:<kid>:<iv>:<ciphertext+tag>` (base64url): the key id says which key
 * opens it, so keys can rotate. The first key seals; every key opens. The associated data
 * (`context`) binds a ciphertext to where it belongs (e.g. one IdP's uid): copied into
 * another row, it no longer opens.
 */
export class SecretBox {
  /**
   * The keys as KeyObjects, made once: on Node 24 a cipher made from a key's bytes costs
   * about 14 µs, from a KeyObject 1.5 (core/page-token.ts).
   */
  readonly #keys: ReadonlyMap<string, KeyObject>;
  /** The key that seals, and its id. */
  readonly #currentKid: string;
  readonly #currentKey: KeyObject;

  /** @throws Error without keys, or with a key that is not 32 bytes. */
  constructor(keys: readonly SecretKey[]) {
    const [current] = keys;
    if (!current) throw new Error('a secret box needs at least one key');
    for (const k of keys) {
      if (k.key.length !== 32) throw new Error(`secret key ${k.kid} must be 32 bytes`);
    }
    this.#currentKid = current.kid;
    this.#keys = new Map(keys.map((k) => [k.kid, createSecretKey(k.key)]));
    this.#currentKey = createSecretKey(current.key);
  }

  /** The id of the key that seals. */
  get currentKid(): string {
    return this.#currentKid;
  }

  /** How every text sealed by the current key begins. */
  get currentPrefix(): string {
    return `${PREFIX}${this.#currentKid}:`;
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#currentKey, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([
      cipher.update(plaintext, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return `${PREFIX}${this.#currentKid}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  /** The key id a sealed text names, or undefined if it is not sealed text. */
  static kidOf(sealed: string): string | undefined {
    if (!sealed.startsWith(PREFIX)) return undefined;
    return sealed.slice(PREFIX.length).split(':')[0];
  }

  /**
   * @throws Error when the text is not sealed, names a key this box does not hold, or
   *   does not authenticate (tampered, or sealed for another context).
   */
  open(sealed: string, context: string): string {
    const parts = sealed.startsWith(PREFIX) ? sealed.slice(PREFIX.length).split(':') : [];
    const [kid, ivText, bodyText] = parts;
    if (parts.length !== 3 || !kid || !ivText || !bodyText) throw new Error('not a sealed secret');
    const key = this.#keys.get(kid);
    if (!key) throw new Error(`no secret key with id ${kid}`);
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(body.subarray(0, body.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return plain.toString('utf8');
  }
}
