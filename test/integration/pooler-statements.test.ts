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
 * Reproduced deterministically: PgBouncer hands out the server connection released last,
 * so a second client that holds a transaction open on it sends Arbor's next statement to
 * a fresh server connection.
 */
const maybe = postgresOnly(
  needTool(test.serial, 'PgBouncer', havePgBouncer() ? undefined : 'no pgbouncer installed'),
);

const STATEMENT = new Statement('SELECT $1::int AS x');

async function runTwiceAcrossServerConnections(pooler: PoolerMode, url: string) {
  const db = await openDatabase({ url, dataDir: '', poolMax: 1, pooler });
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  try {
    const first = await STATEMENT.rows<{ x: number }>(db.knex, [1]);
    // The other client now holds the server connection the statement was prepared on.
    await other.query('BEGIN');
    await other.query('SELECT 1');
    try {
      return { first, second: await STATEMENT.rows<{ x: number }>(db.knex, [2]) };
    } catch (e) {
      return { first, error: e };
    } finally {
      await other.query('COMMIT');
    }
  } finally {
    await other.end();
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
      t.deepEqual(broken.first, [{ x: 1 }]);
      t.is(sqlState(broken.error), '26000', 'the name is unknown on the other server connection');

      const fixed = await runTwiceAcrossServerConnections('transaction', url);
      t.deepEqual(fixed.first, [{ x: 1 }]);
      t.deepEqual(fixed.second, [{ x: 2 }]);
    } finally {
      await bouncer.stop();
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    }
  },
);
