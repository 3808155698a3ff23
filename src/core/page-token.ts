import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { invalidField } from './rpc-error.js';

/** Page tokens live three days (spec §8); after that the query restarts from the top. */
export const PAGE_TOKEN_TTL_MS = 3 * 24 * 60 * 60 * 1000;

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
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(secret: Buffer, now: () => number = Date.now) {
    if (secret.length < 32) throw new Error('page token secret must be at least 32 bytes');
    this.#key = createHash('sha256').update('arbor-page-token\0').update(secret).digest();
    this.#now = now;
  }

  encode(position: PagePosition): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const payload = JSON.stringify({
      v: 1,
      q: position.query,
      k: position.key,
      e: this.#now() + PAGE_TOKEN_TTL_MS,
      ...(position.total === undefined ? {} : { t: position.total }),
      ...(position.view === undefined ? {} : { w: position.view }),
    });
    const body = Buffer.concat([cipher.update(payload, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
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
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

/**
 * A fingerprint of what a count saw (a visibility, a caller's view of bindings), so that a
 * total carried by a token is read back only by a caller with the same view.
 */
export function viewFingerprint(view: string): string {
  return createHash('sha256').update('arbor-view\0').update(view).digest('base64url').slice(0, 22);
}
