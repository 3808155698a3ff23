import knexFactory, { type Knex } from 'knex';
import { openDatabase } from '../../src/db/connect.js';
import { freshDatabase, type TestDatabase } from './db.js';
import { startServer, type TestServer } from './server.js';
import { TcpProxy } from './tcp-proxy.js';

/**
 * Two workers over one fresh PostgreSQL database, each with its own change feed and read
 * caches, and a writer that bypasses Arbor (`sql`: another process, or a person with psql).
 * Worker b hears of changes 100 ms late each way (its feed goes through a slow proxy), so a
 * cache that served without proof would answer stale there, and a test would see it.
 * Resolves once both feeds prove themselves current.
 */
export interface FeedWorkers {
  db: TestDatabase;
  a: TestServer;
  b: TestServer;
  sql: Knex;
  close(): Promise<void>;
}

export async function startFeedWorkers(env: Record<string, string> = {}): Promise<FeedWorkers> {
  const db = await freshDatabase();
  const a = await startServer(env, { database: db });
  const target = new URL(db.url!);
  const slow = new TcpProxy(target.hostname, Number(target.port || 5432), 100);
  const listen = new URL(db.url!);
  listen.port = String(await slow.start());
  const second = await openDatabase({ url: db.url!, listenUrl: listen.toString(), dataDir: '' });
  const b = await startServer(env, { database: { ...second, url: db.url! } });
  const sql = knexFactory({ client: 'pg', connection: db.url!, pool: { min: 0, max: 2 } });
  await Promise.all([feedUp(a), feedUp(b)]);
  return {
    db,
    a,
    b,
    sql,
    close: async () => {
      await sql.destroy();
      await b.close();
      await a.close();
      await slow.stop();
    },
  };
}

/** Resolves once `s`'s change feed proves itself current (10 s at most). */
export async function feedUp(s: TestServer): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!s.db.changeFeed?.fresh()) {
    if (Date.now() > deadline) throw new Error('the change feed did not come up');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The staleness bound (docs/operations.md): a proof older than this vouches for nothing. */
export const BOUND_MS = 500;

/**
 * Polls `fn` until it is true, holding it to the staleness bound measured from the change:
 * a read begun once BOUND_MS have passed since `changed` (Date.now() once the change's
 * write returned, so no earlier than its commit) must see it. A loaded machine may make
 * reads slow, never stale: a cache without a recent enough proof stands aside.
 * @returns how long after the change the first read that saw it began.
 */
export async function withinBound(
  changed: number,
  fn: () => boolean | Promise<boolean>,
): Promise<number> {
  for (;;) {
    const started = Date.now();
    if (await fn()) return started - changed;
    if (started - changed >= BOUND_MS)
      throw new Error(`still not seen by a read begun ${started - changed} ms after the change`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
