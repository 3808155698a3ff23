import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { TcpProxy } from './tcp-proxy.js';

/** Which backend this run of the suite uses: `npm test` runs it once on each. */
export const TEST_BACKEND: 'pglite' | 'postgres' =
  process.env.ARBOR_TEST_DB === 'postgres' ? 'postgres' : 'pglite';

export const PG_ADMIN_URL =
  process.env.ARBOR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * ARBOR_TEST_PG_POOLER_URL: a transaction-mode pooler (PgBouncer) in front of the test
 * server (scripts/pgbouncer/pgbouncer.sh). Databases are still created and dropped on the
 * server directly; the code under test connects through the pooler, with
 * DATABASE_POOLER=transaction.
 */
export const PG_POOLER_URL = process.env.ARBOR_TEST_PG_POOLER_URL || undefined;

/** What the code under test runs behind (DatabaseOptions.pooler). */
export const TEST_POOLER = PG_POOLER_URL === undefined ? 'none' : 'transaction';

/** The URL of a database named `name` on the test server. */
export function pgUrl(name: string, base = PG_ADMIN_URL): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface TestDatabase extends Database {
  /** Connection URL (postgres only). */
  url?: string;
}

/**
 * A fresh, empty database for one test file: a new database on the real PostgreSQL
 * server, or an in-memory PGlite. Dropped again by `close()`.
 */
export async function freshDatabase(): Promise<TestDatabase> {
  if (TEST_BACKEND === 'pglite') return openDatabase({ dataDir: 'memory://' });
  const name = `arbor_t_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const url = pgUrl(name, PG_POOLER_URL);
  const db = await openDatabase({ url, dataDir: '', pooler: TEST_POOLER });
  return {
    ...db,
    url,
    close: async () => {
      await db.close();
      const a = knexFactory({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.destroy();
    },
  };
}

/**
 * A fresh PostgreSQL database (`real`, for the test's own reads and its drop) and a second
 * connection to it through a loopback proxy the test can cut and restore (`proxy`, on
 * `port`): a real outage under a running server without touching the database itself.
 */
export async function databaseBehindProxy(): Promise<{
  real: TestDatabase;
  db: Database;
  proxy: TcpProxy;
  port: number;
}> {
  const real = await freshDatabase();
  const target = new URL(real.url!);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  const port = await proxy.start();
  const viaProxy = new URL(real.url!);
  viaProxy.port = String(port);
  const db = await openDatabase({
    url: viaProxy.toString(),
    dataDir: '',
    poolMax: 4,
    pooler: TEST_POOLER,
  });
  return { real, db, proxy, port };
}
