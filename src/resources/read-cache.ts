/**
 * Rows a Get may answer from memory (db/read-cache.ts). `load(true)` must read the
 * primary: its answer may be remembered. `load(false)` may read a replica: the cache is
 * not serving (no notification connection, or the request's consistency token is ahead of
 * what the cache has heard) and keeps nothing. A value kept is frozen, being shared.
 */
export interface ReadCache<T> {
  read(key: string, load: (primary: boolean) => Promise<T>): Promise<T>;
  /** The remembered value of `key`, only when the cache may serve it now; else undefined. */
  peek(key: string): { value: T } | undefined;
  /**
   * Load `key` from the primary in the background and keep it, when the cache may serve and
   * does not hold it; otherwise nothing. Failures are dropped (the next read tries again).
   */
  warm(key: string, load: () => Promise<T>): void;
}
