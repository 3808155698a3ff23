import type { Knex } from 'knex';

interface QueryEvent {
  __knexQueryUid?: string;
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/**
 * Calls `done(seconds, ok)` once per query that Knex runs, from its query events; the
 * rest of the code base stays unaware. (Queries inside a transaction report the same.)
 */
export function observeQueries(knex: Knex, done: (seconds: number, ok: boolean) => void): void {
  const started = new Map<string, number>();
  knex.on('query', (q: QueryEvent) => {
    if (q.__knexQueryUid) started.set(q.__knexQueryUid, performance.now());
  });
  const finish = (ok: boolean) => (_r: unknown, q: QueryEvent) => {
    const uid = q?.__knexQueryUid;
    const t0 = uid === undefined ? undefined : started.get(uid);
    if (uid === undefined || t0 === undefined) return;
    started.delete(uid);
    done((performance.now() - t0) / 1000, ok);
  };
  knex.on('query-response', finish(true));
  knex.on('query-error', finish(false));
}

/** The connection pool's counts now, or undefined before the pool exists or after close. */
export function poolStats(
  knex: Knex,
): { used: number; free: number; pending: number; max: number } | undefined {
  const pool = (knex.client as { pool?: TarnPool }).pool;
  if (!pool) return undefined;
  return {
    used: pool.numUsed(),
    free: pool.numFree(),
    pending: pool.numPendingAcquires(),
    max: pool.max,
  };
}
