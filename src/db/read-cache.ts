import { Lru } from '../core/lru.js';
import { consistencyScope } from '../resources/consistency.js';
import type { ReadCache } from '../resources/read-cache.js';
import type { ChangeFeed } from './change-feed.js';
import { decodeToken } from './consistency-token.js';
import { inPreconditionCheck } from './unit-of-work.js';

export interface ReadCacheStats {
  hits: number;
  misses: number;
  /** Reads that went to the database because the feed could not vouch for the cache. */
  bypassed: number;
}

export interface FeedCacheOptions<T> {
  /** At most this many values (least recently used go first); default 50,000. */
  maxEntries?: number;
  /**
   * The cache's keys are not the announced keys (a value derived from many rows of the
   * kind, such as a who-can page): every announcement of the kind forgets everything.
   */
  derived?: boolean;
  /**
   * When a kept value stops being true with no write to announce it (epoch ms: a binding's
   * expiry); a value read at or after it is a miss. Absent: never.
   */
  validUntil?: (value: T) => number;
}

/**
 * Rows of one kind (`g` groups, `b` grants per identity), remembered while the change feed
 * says nothing has changed (change-feed.ts). Every announcement of the kind, and every
 * reset of the feed, forgets the key (or all) and bumps a generation: a load that was in
 * flight across an announcement may have read the row before the change, so it answers its
 * caller but is not kept. Absence is remembered too: a new row is announced like any other.
 */
export class FeedCache<T> implements ReadCache<T> {
  readonly stats: ReadCacheStats = { hits: 0, misses: 0, bypassed: 0 };
  readonly #rows: Lru<string, { value: T }>;
  readonly #validUntil: ((value: T) => number) | undefined;
  #generation = 0;

  constructor(
    private readonly feed: ChangeFeed,
    kind: string,
    o: FeedCacheOptions<T> = {},
  ) {
    this.#rows = new Lru(o.maxEntries ?? 50_000);
    this.#validUntil = o.validUntil;
    const derived = o.derived ?? false;
    feed.subscribe((k, key) => {
      if (k !== kind && k !== '*') return;
      this.#generation++;
      if (key === undefined || derived) this.#rows.clear();
      else this.#rows.delete(key);
    });
  }

  /** The kept value of `key`, unless its time has passed (then it is forgotten). */
  #held(key: string): { value: T } | undefined {
    const hit = this.#rows.get(key);
    if (hit === undefined || this.#validUntil === undefined) return hit;
    if (Date.now() < this.#validUntil(hit.value)) return hit;
    this.#rows.delete(key);
    return undefined;
  }

  async read(key: string, load: (primary: boolean) => Promise<T>): Promise<T> {
    if (!this.serving()) {
      this.stats.bypassed++;
      return load(false);
    }
    const hit = this.#held(key);
    if (hit !== undefined) {
      this.stats.hits++;
      return hit.value;
    }
    this.stats.misses++;
    const generation = this.#generation;
    const value = await load(true);
    this.#keep(key, value, generation);
    return value;
  }

  peek(key: string): { value: T } | undefined {
    if (!this.serving()) return undefined;
    const hit = this.#held(key);
    if (hit !== undefined) this.stats.hits++;
    return hit;
  }

  warm(key: string, load: () => Promise<T>): void {
    if (!this.serving() || this.#held(key) !== undefined) return;
    this.stats.misses++;
    const generation = this.#generation;
    load().then(
      (value) => this.#keep(key, value, generation),
      () => undefined,
    );
  }

  /**
   * Keep `value`, loaded when the cache was at `generation`, unless an announcement came
   * meanwhile or the feed stopped vouching. A kept object is frozen: every request that
   * reads it shares it (and the REST door makes its answer once, see api/routes/crud.ts).
   */
  #keep(key: string, value: T, generation: number): void {
    if (generation !== this.#generation || !this.feed.fresh()) return;
    if (typeof value === 'object' && value !== null) Object.freeze(value);
    this.#rows.set(key, { value });
  }

  /**
   * Whether this request may be answered from memory: the feed vouches at the request's
   * token, and no precondition check is comparing the row it has locked in its own
   * transaction.
   */
  private serving(): boolean {
    const token = requestToken();
    return token !== null && this.feed.fresh(token) && !inPreconditionCheck();
  }

  /** Forget everything (this process changed what the rows derive from). */
  clear(): void {
    this.#generation++;
    this.#rows.clear();
  }

  get size(): number {
    return this.#rows.size;
  }
}

/**
 * The LSN the request must see: its own write's token, else the client's; undefined when it
 * has neither; null for a malformed one (which the cache cannot vouch for, so it reads the
 * database, as a replica read goes to the primary).
 */
function requestToken(): bigint | undefined | null {
  const scope = consistencyScope();
  const text = scope?.written ?? scope?.requested;
  if (text === undefined) return undefined;
  return decodeToken(text) ?? null;
}
