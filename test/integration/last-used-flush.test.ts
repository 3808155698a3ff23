import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import test from 'ava';
import { TEST_BACKEND, TEST_POOLER, databaseBehindProxy } from '../helpers/db.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRole } from '../helpers/authority.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * The last-used flush: written every ARBOR_LAST_USED_FLUSH_MS and not
 * more often, once more on graceful shutdown, and a kill -9 loses only what was recorded
 * since the last flush (never a grant), and a write the database refuses (gone behind a real
 * TCP proxy the test cuts) is kept for the next flush. Bounds are stated so that a slow machine cannot
 * fail them: a timer never fires early, so flushes are at most one per interval.
 */
const INTERVAL = 200;
let s: TestServer;
let folder: string;
let identity: string;
let binding: string;

const lastUsed = async (uid: string) =>
  (
    (await s.db.knex('binding_usage').where('binding_uid', uid).select('last_used_at')) as Array<{
      last_used_at: Date;
    }>
  )[0]?.last_used_at.getTime();

test.before(async () => {
  // Every use moves last used here (no coarsening): these tests are about the flush.
  s = await startServer({
    ARBOR_LAST_USED_FLUSH_MS: String(INTERVAL),
    ARBOR_LAST_USED_RESOLUTION_MS: '0',
  });
  const org = await createGroup(s.admin, 'flush-org');
  folder = await createGroup(s.admin, 'flush-folder', org);
  identity = await createIdentity(s.admin, folder, 'flusher');
  binding = await createBinding(s.admin, folder, identity, await builtinRole(s.admin, 'viewer'));
});
test.after.always(async () => {
  await s?.close();
});

test.serial('the flush runs every interval on its own, and never more often', async (t) => {
  const u = s.arbor.usage!;
  const api = s.client((await s.arbor.tokens.sign(identity, { iss: ISSUER, sub: 'x' })).token);
  const before = u.flusher.stats.flushes;
  const start = Date.now();
  u.flusher.start();
  try {
    // Uses all along, so that every timer tick has something to write.
    let written: number | undefined;
    while (Date.now() - start < 2_000 || written === undefined) {
      t.is((await api.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
      written = await lastUsed(binding);
      if (Date.now() - start > 60_000) break;
    }
    t.truthy(written, 'written with no explicit flush');
    const elapsed = Date.now() - start;
    const flushes = u.flusher.stats.flushes - before;
    t.true(flushes >= 1);
    t.true(flushes <= Math.floor(elapsed / INTERVAL) + 1, `${flushes} flushes in ${elapsed} ms`);
  } finally {
    await u.flusher.stop();
  }
});

test.serial(
  'stopping (graceful shutdown) writes what was recorded since the last flush',
  async (t) => {
    const u = s.arbor.usage!;
    await u.flusher.flush();
    const at = Date.now() + 1;
    u.recorder.bindingUsed(binding, at);
    t.not(await lastUsed(binding), at);
    await u.flusher.stop();
    t.is(await lastUsed(binding), at);
  },
);

test.serial('a failed write (the database gone) keeps its batch for the next flush', async (t) => {
  if (TEST_BACKEND !== 'postgres') {
    t.pass('only a server database can go away under a running process; PGlite lives inside it');
    return;
  }
  // A server of its own whose database is reached through a proxy the test cuts.
  const { real, db, proxy, port } = await databaseBehindProxy();
  const cut = await startServer(
    { ARBOR_LAST_USED_FLUSH_MS: String(INTERVAL), ARBOR_LAST_USED_RESOLUTION_MS: '0' },
    {
      database: {
        ...db,
        close: async () => {
          await db.close();
          await real.close();
        },
      },
    },
  );
  try {
    const org = await createGroup(cut.admin, 'outage-org');
    const who = await createIdentity(cut.admin, org, 'outage');
    const bound = await createBinding(cut.admin, org, who, await builtinRole(cut.admin, 'viewer'));
    const u = cut.arbor.usage!;
    const at = Date.now() + 2;
    u.recorder.bindingUsed(bound, at);
    await proxy.stop();
    await t.throwsAsync(u.flusher.flush(), undefined, 'the write fails: no database');
    t.is(u.flusher.stats.failures, 1);
    t.true(u.recorder.pending, 'the batch is kept');
    await proxy.start(port);
    // The pool reconnects: the next flush writes what the failed one could not.
    let written: number | undefined;
    for (let i = 0; i < 50 && written === undefined; i++) {
      await u.flusher.flush().catch(() => new Promise((r) => setTimeout(r, 200)));
      written = (
        (await real.knex('binding_usage').where('binding_uid', bound).first('last_used_at')) as
          { last_used_at: Date } | undefined
      )?.last_used_at.getTime();
    }
    t.is(written, at);
  } finally {
    await cut.close();
    await proxy.stop();
  }
});

/**
 * A separate process, killed with SIGKILL: it composes Arbor on the same database, starts
 * the flush, and decides "may the identity list the folder?" every few milliseconds,
 * printing each decision's instant and, after each flush, the latest use it wrote. It is
 * told the pooler mode the test's database is reached through: behind PgBouncer's
 * transaction mode its named statements would meet a server connection another of its own
 * connections prepared them on ("prepared statement … already exists").
 */
const POOLER = TEST_POOLER === 'transaction' ? ", DATABASE_POOLER: 'transaction'" : '';
const CHILD = `
import { compose } from './src/compose.ts';
import { loadConfig } from './src/config.ts';
import { pino } from 'pino';
const [url, dir, identity, folder] = process.argv.slice(-4);
const config = loadConfig({ DATABASE_URL: url, DATA_DIR: dir, ARBOR_LAST_USED_FLUSH_MS: '${INTERVAL}', ARBOR_LAST_USED_RESOLUTION_MS: '0'${POOLER} });
const arbor = await compose(config, { logger: pino({ level: 'silent' }), migrate: false });
arbor.usage.flusher.start();
let reported = 0;
for (;;) {
  const ok = await arbor.authz.can(Object.freeze({ kind: 'identity', uid: identity }), 'groups.list', folder);
  const at = Date.now();
  if (!ok) throw new Error('denied');
  console.log('used ' + at);
  const w = arbor.usage.flusher.stats.lastWritten;
  if (w !== reported) { reported = w; console.log('flushed ' + w); }
  await new Promise((r) => setTimeout(r, 5));
}
`;

test.serial(
  'kill -9 loses only what was recorded since the last flush, never a grant',
  async (t) => {
    if (TEST_BACKEND !== 'postgres' || !s.db.url) {
      t.pass('a second process needs PostgreSQL (PGlite here is one process, in memory)');
      return;
    }
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'arbor-kill-'));
    // node itself (not npx, whose SIGKILL would leave its node child running).
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', CHILD, s.db.url, dir, identity, folder],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let lastUse = 0;
    let lastFlushed = 0;
    let flushesSeen = 0;
    let usesAfter = 0;
    let killedAt = 0;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Every line is read, until the exit: a flush reported just before the kill counts too.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const [word, n] = line.split(' ');
      if (word === 'flushed') {
        lastFlushed = Number(n);
        flushesSeen++;
      }
      if (word !== 'used') return;
      lastUse = Number(n);
      // A few flushes in, kill it some uses after one: between two flushes.
      if (killedAt === 0 && flushesSeen >= 3 && ++usesAfter === 15) {
        killedAt = Date.now();
        child.kill('SIGKILL');
      }
    });
    await exited;
    await new Promise((r) => setTimeout(r, 100));
    t.true(killedAt > 0, 'killed by the test, not exited on its own');
    const stored = await lastUsed(binding);
    t.truthy(stored);
    t.true(stored! >= lastFlushed, 'a completed flush is never lost');
    t.true(stored! <= killedAt, 'nothing after the kill');
    t.log(`lost: ${lastUse - stored!} ms of last-used (flush interval ${INTERVAL} ms)`);
    // Never a grant: the binding still grants.
    const api = s.client((await s.arbor.tokens.sign(identity, { iss: ISSUER, sub: 'x' })).token);
    t.is((await api.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
  },
);
