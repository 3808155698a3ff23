/**
 * A map that holds at most `max` entries and forgets the least recently used one first.
 * For caches keyed by anything a caller can vary (issuers, patterns): without a bound, a
 * stream of distinct keys grows memory without limit.
 */
export class Lru<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('an LRU holds at least one entry');
  }

  get size(): number {
    return this.#map.size;
  }

  /** The value of `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v === undefined) return undefined;
    // A Map iterates in insertion order: re-inserting moves the key to the young end.
    this.#map.delete(key);
    this.#map.set(key, v);
    return v;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  set(key: K, value: V): this {
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.max) {
      const oldest = this.#map.keys().next();
      if (oldest.done) break;
      this.#map.delete(oldest.value);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}
