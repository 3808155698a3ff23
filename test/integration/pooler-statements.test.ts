import { randomBytes } from 'node:crypto';
import test from 'ava';
import knexFactory from 'knex';
import pg from 'pg';
import { openDatabase } from '../../src/db/connect.js';
import { sqlState } from '../../src/db/errors.js';
import type { PoolerMode } from '../../src/db/pooler-mode.js';
import { Statement } from '../../src/db/prepared.js';
import { PG_ADMIN_URL, pgUrl } from '../helpers/db.js';
import { havePgBouncer, startPgBouncer } from '../helpers/pgbouncer.js';
import { needTool, postgresOnly } from '../helpers/need-tool.js';

/**
 * Behind PgBouncer 1.18 in transaction mode, a named prepared statement is prepared on
 * whichever server connection ran it; the next execution may get another one, where the
 * name does not exist (SQLSTATE 26000). DATABASE_POOLER=transaction runs them unnamed.
 * Reproduced deterministically whichever server connection PgBouncer picks: the statement
 * reports its backend pid, other clients open transactions until one of them holds that
 * server connection, and the rest are let go, so Arbor's next execution lands on another.
 */
const maybe = postgresOnly(
  needTool(test.serial, 'PgBouncer', havePgBouncer() ? undefined : 'no pgbouncer installed'),
);

const STATEMENT = new Statement('SELECT $1::int AS x, pg_backend_pid() AS pid');
/** More than PgBouncer's idle server connections for one fresh database can be. */
const MAX_HOLDERS = 8;

/** A client in an open transaction on the server connection whose backend is `pid`. */
async function holdServerConnection(url: string, pid: number): Promise<pg.Client> {
  const tried: pg.Client[] = [];
  try {
    for (let i = 0; i < MAX_HOLDERS; i++) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      tried.push(c);
      await c.query('BEGIN');
      const got = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      if (got.rows[0]?.pid === pid) return tried.pop()!;
    }
    throw new Error(`no client got the server connection of backend ${pid}`);
  } finally {
    // The others' server connections go back to the pool for Arbor's next statement.
    await Promise.all(tried.map((c) => c.query('COMMIT').then(() => c.end())));
  }
}

async function runTwiceAcrossServerConnections(pooler: PoolerMode, url: string) {
  const db = await openDatabase({ url, dataDir: '', poolMax: 1, pooler });
  try {
    const [first] = await STATEMENT.rows<{ x: number; pid: number }>(db.knex, [1]);
    const holder = await holdServerConnection(url, first!.pid);
    try {
      const [second] = await STATEMENT.rows<{ x: number; pid: number }>(db.knex, [2]);
      return { first, second };
    } catch (e) {
      return { first, error: e };
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
  } finally {
    await db.close();
  }
}

maybe(
  'pooler: named statements break in transaction mode; DATABASE_POOLER=transaction runs them unnamed',
  async (t) => {
    const name = `arbor_t_${randomBytes(6).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
    await admin.raw(`CREATE DATABASE ${name}`);
    const bouncer = await startPgBouncer(PG_ADMIN_URL);
    try {
      const url = pgUrl(name, bouncer.url);

      const broken = await runTwiceAcrossServerConnections('none', url);
      t.is(broken.first?.x, 1);
      t.is(sqlState(broken.error), '26000', 'the name is unknown on the other server connection');

      const fixed = await runTwiceAcrossServerConnections('transaction', url);
      t.is(fixed.first?.x, 1);
      t.is(fixed.second?.x, 2);
      t.not(fixed.second?.pid, fixed.first?.pid, 'the second ran on another server connection');
    } finally {
      await bouncer.stop();
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    }
  },
);
