import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { invalidField } from './rpc-error.js';

/** Page tokens live three days (spec §8); after that the query restarts from the top. */
export const PAGE_TOKEN_TTL_MS = 3 * 24 * 60 * 60 * 1000;

/** How long a minted token is handed out again for the same position (see PageTokenCodec). */
export const TOKEN_REUSE_MS = 1_000;

/** A position in one query: the sort key of the last row served and the query it belongs to. */
export interface PagePosition {
  /** Fingerprint of the resource kind, filters and order the token was minted for. */
  query: string;
  /** Sort-key values of the last row served; the last element is always the uid. */
  key: (string | number | null)[];
  /** totalCount as counted on the first page of this cursor chain. */
  total?: string;
  /**
   * Fingerprint of the view `total` was counted for (the caller's visibility, and whatever
   * else the count depends on): another view does not take it (see `viewFingerprint`).
   */
  view?: string;
}

export type DecodedToken = { kind: 'position'; position: PagePosition } | { kind: 'expired' };

/**
 * Seals page positions with AES-256-GCM: the client can neither read nor alter a token,
 * and one minted for a query cannot be replayed against another. A token grants no
 * access: callers re-check visibility on every page.
 */
export class PageTokenCodec {
  /**
   * A KeyObject, made once. Why: on Node 24 a cipher made from the key's bytes costs about
   * 14 µs (the key is imported anew each time), from a KeyObject 1.5; every cursor page
   * decodes a token (BENCHMARKS.md, 2026-11-30).
   */
  readonly #key: KeyObject;
  readonly #now: () => number;
  /**
   * Tokens minted in the last {@link TOKEN_REUSE_MS} by position: the same next page of a
   * list asked again (a console's first page, a poller) takes the same token, instead of a
   * fresh IV and AES-GCM pass each time (about 6 µs of CPU, against 1 µs for a reuse). A
   * reused token expires at most that much earlier than a fresh one would; it reveals
   * nothing a fresh one does not (the position, the query and the view are the same, and so
   * is what decoding either gives).
   */
  readonly #recent = new Map<string, { at: number; token: string }>();
  /** Random bytes drawn in bulk, 12 taken per IV: one RNG call per 256 tokens. */
  #ivs = Buffer.alloc(0);
  #ivAt = 0;

  constructor(secret: Buffer, now: () => number = Date.now) {
    if (secret.length < 32) throw new Error('page token secret must be at least 32 bytes');
    this.#key = createSecretKey(
      createHash('sha256').update('arbor-page-token\0').update(secret).digest(),
    );
    this.#now = now;
  }

  encode(position: PagePosition): string {
    const now = this.#now();
    const same = JSON.stringify([position.query, position.key, position.total, position.view]);
    const hit = this.#recent.get(same);
    if (hit !== undefined && now - hit.at < TOKEN_REUSE_MS && now >= hit.at) return hit.token;
    const iv = this.#iv();
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const payload = JSON.stringify({
      v: 1,
      q: position.query,
      k: position.key,
      e: now + PAGE_TOKEN_TTL_MS,
      ...(position.total === undefined ? {} : { t: position.total }),
      ...(position.view === undefined ? {} : { w: position.view }),
    });
    const body = Buffer.concat([cipher.update(payload, 'utf8'), cipher.final()]);
    const token = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    if (this.#recent.size >= 1_000) this.#recent.clear();
    this.#recent.set(same, { at: now, token });
    return token;
  }

  /** A fresh random 96-bit IV (never one handed out before: the pool is only read forward). */
  #iv(): Buffer {
    if (this.#ivAt + 12 > this.#ivs.length) {
      this.#ivs = randomBytes(12 * 256);
      this.#ivAt = 0;
    }
    const iv = this.#ivs.subarray(this.#ivAt, this.#ivAt + 12);
    this.#ivAt += 12;
    return iv;
  }

  /**
   * @throws RpcError INVALID_ARGUMENT on `page_token` if the token is not one of ours or
   *   belongs to another query; an expired token is not an error (spec §7 rule 3).
   */
  decode(token: string, query: string): DecodedToken {
    const raw = Buffer.from(token, 'base64url');
    if (raw.length < 12 + 16 + 2 || token.length > 4096) throw bad();
    let parsed: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
      parsed = JSON.parse(plain.toString('utf8'));
    } catch {
      throw bad();
    }
    if (!isPayload(parsed)) throw bad();
    if (parsed.e <= this.#now()) return { kind: 'expired' };
    if (parsed.q !== query) {
      throw invalidField(
        'page_token',
        'the token belongs to a different query (filters or order_by changed)',
      );
    }
    const position: PagePosition = { query: parsed.q, key: parsed.k };
    if (typeof parsed.t === 'string' && /^\d+$/.test(parsed.t)) position.total = parsed.t;
    if (typeof parsed.w === 'string') position.view = parsed.w;
    return { kind: 'position', position };
  }
}

interface Payload {
  v: 1;
  q: string;
  k: (string | number | null)[];
  e: number;
  t?: unknown;
  w?: unknown;
}

function isPayload(x: unknown): x is Payload {
  if (typeof x !== 'object' || x === null) return false;
  const p = x as Record<string, unknown>;
  return (
    p.v === 1 &&
    typeof p.q === 'string' &&
    typeof p.e === 'number' &&
    Array.isArray(p.k) &&
    p.k.length >= 1 &&
    p.k.every((v) => v === null || typeof v === 'string' || typeof v === 'number')
  );
}

function bad() {
  return invalidField('page_token', 'invalid page token');
}

/** A stable fingerprint of a query's identity (kind, filters, order), for binding tokens. */
export function queryFingerprint(parts: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(parts)
      .sort()
      .map((k) => [k, parts[k]]),
  );
  return remembered(queryPrints, canonical, () =>
    createHash('sha256').update(canonical).digest('base64url').slice(0, 22),
  );
}

/** Recent fingerprints by their input: every page of a list hashes the same text. */
const queryPrints = new Map<string, string>();
const viewPrints = new Map<string, string>();

function remembered(m: Map<string, string>, key: string, make: () => string): string {
  let v = m.get(key);
  if (v !== undefined) return v;
  v = make();
  if (m.size >= 1_000) m.clear();
  m.set(key, v);
  return v;
}

/**
 * A fingerprint of what a count saw (a visibility, a caller's view of bindings), so that a
 * total carried by a token is read back only by a caller with the same view.
 */
export function viewFingerprint(view: string): string {
  return remembered(viewPrints, view, () =>
    createHash('sha256').update('arbor-view\0').update(view).digest('base64url').slice(0, 22),
  );
}
