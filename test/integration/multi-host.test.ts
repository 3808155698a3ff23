import { randomBytes } from 'node:crypto';
import test from 'ava';
import knexFactory from 'knex';
import { openDatabase } from '../../src/db/connect.js';
import { translateDbError } from '../../src/db/errors.js';
import { PG_ADMIN_URL, TEST_POOLER, pgUrl } from '../helpers/db.js';
import { freePort } from '../helpers/process.js';
import { NOT_POOLED, postgresOnly } from '../helpers/need-tool.js';

/**
 * A multi-host DATABASE_URL on the one test server: a host that refuses is passed over,
 * and with target_session_attrs=read-write a server that only reads is not used (the
 * failover test in test/ha does this with a real standby).
 */
const maybe = postgresOnly(test.serial, { when: TEST_POOLER === 'none', why: NOT_POOLED });

/** `url` with its host list replaced by `hosts`. */
function withHosts(url: string, hosts: string, query = ''): string {
  const u = new URL(url);
  return `postgres://${u.username}${u.password ? `:${u.password}` : ''}@${hosts}${u.pathname}${query}`;
}

async function database(readOnly: boolean) {
  const name = `arbor_t_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  if (readOnly) await admin.raw(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
  return {
    url: pgUrl(name),
    drop: async () => {
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    },
  };
}

maybe('multi-host: a host that refuses is passed over for the next', async (t) => {
  const d = await database(false);
  const real = new URL(d.url);
  const dead = `127.0.0.1:${await freePort()}`;
  const db = await openDatabase({
    url: withHosts(d.url, `${dead},${real.host}`, '?target_session_attrs=read-write'),
    dataDir: '',
  });
  try {
    const r = (await db.knex.raw('SELECT inet_server_port() AS port')) as {
      rows: Array<{ port: number }>;
    };
    t.is(String(r.rows[0]!.port), real.port || '5432');
  } finally {
    await db.close();
    await d.drop();
  }
});

maybe('multi-host: with read-write, a read-only server is not used: UNAVAILABLE', async (t) => {
  const d = await database(true);
  const real = new URL(d.url);
  const dead = `127.0.0.1:${await freePort()}`;
  const rw = await openDatabase({
    url: withHosts(d.url, `${dead},${real.host}`, '?target_session_attrs=read-write'),
    dataDir: '',
  });
  const any = await openDatabase({
    url: withHosts(d.url, `${dead},${real.host}`, '?target_session_attrs=any'),
    dataDir: '',
  });
  try {
    const e = await t.throwsAsync(rw.knex.raw('SELECT 1'));
    t.is((e as { code?: string }).code, '08001');
    t.regex(e!.message, /no read-write server among 127\.0\.0\.1:\d+, /);
    t.like(translateDbError(e), { code: 14 });
    // Without the attribute the same server is used, and refuses writes as read-only:
    // also UNAVAILABLE (a demoted primary), not INTERNAL.
    const pid = async () =>
      ((await any.knex.raw('SELECT pg_backend_pid() AS p')) as { rows: Array<{ p: number }> })
        .rows[0]!.p;
    const before = await pid();
    t.is(await pid(), before, 'one connection, reused');
    const w = await t.throwsAsync(any.knex.raw('CREATE TABLE t (x int)'));
    t.is((w as { code?: string }).code, '25006');
    t.like(translateDbError(w), { code: 14 });
    // The pool dropped the connection that met a read-only server: the next is a new one.
    t.not(await pid(), before);
  } finally {
    await rw.close();
    await any.close();
    await d.drop();
  }
});
