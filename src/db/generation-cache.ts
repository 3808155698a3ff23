import { Lru } from '../core/lru.js';
import type { ReadCache } from '../resources/read-cache.js';
import type { ReadCacheStats } from './read-cache.js';

/**
 * Values read from a database that only this process writes (embedded PGlite: one process
 * holds its data directory, serve-cluster.ts), kept until this process's next transaction.
 * `generation` is the unit of work's write generation, which grows once a transaction has
 * ended: a value is served only while it has not grown since the value was read, and a
 * load that a transaction overlapped is not kept (it may have read the rows before it).
 * What a change feed does for PostgreSQL (FeedCache), with nobody else to hear from.
 */
export class GenerationCache<T> implements ReadCache<T> {
  readonly stats: ReadCacheStats = { hits: 0, misses: 0, bypassed: 0 };
  readonly #rows: Lru<string, { value: T; generation: number }>;

  constructor(
    private readonly generation: () => number,
    maxEntries = 10_000,
  ) {
    this.#rows = new Lru(maxEntries);
  }

  async read(key: string, load: (primary: boolean) => Promise<T>): Promise<T> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit.value;
    this.stats.misses++;
    const at = this.generation();
    const value = await load(true);
    this.#keep(key, value, at);
    return value;
  }

  peek(key: string): { value: T } | undefined {
    const hit = this.#rows.get(key);
    if (hit === undefined || hit.generation !== this.generation()) return undefined;
    this.stats.hits++;
    return hit;
  }

  warm(key: string, load: () => Promise<T>): void {
    if (this.peek(key) !== undefined) return;
    const at = this.generation();
    load().then(
      (value) => this.#keep(key, value, at),
      () => undefined,
    );
  }

  #keep(key: string, value: T, at: number): void {
    if (at !== this.generation()) return;
    if (typeof value === 'object' && value !== null) Object.freeze(value);
    this.#rows.set(key, { value, generation: at });
  }
}
