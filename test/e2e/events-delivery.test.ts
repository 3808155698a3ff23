import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import knexFactory from 'knex';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';
import { PG_ADMIN_URL, pgUrl } from '../helpers/db.js';
import { startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { makeClient, type Client } from '../helpers/server.js';
import { postgresOnly } from '../helpers/need-tool.js';

/**
 * The delivery guarantees with real `arbor serve` processes on one PostgreSQL: nothing lost
 * across a kill -9, and no event delivered twice by two replicas in the normal path.
 * (PGlite is one process by construction; the integration tests cover it.)
 */
const onPostgres = postgresOnly(test.serial);
const TOKEN = 'e2e-events-admin-token-0123456789';

interface Env {
  dbUrl: string;
  keysDir: string;
  dataDir: string;
  cleanup(): Promise<void>;
}

async function environment(): Promise<Env> {
  const name = `arbor_e2e_ev_${randomBytes(5).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-events-'));
  return {
    dbUrl: pgUrl(name),
    // Replicas share the signing keys, as they would in a deployment.
    keysDir: join(dataDir, 'keys'),
    dataDir,
    cleanup: async () => {
      const a = knexFactory({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function serve(e: Env, extra: Record<string, string> = {}): Promise<ArborProcess> {
  return startArborProcess({
    DATABASE_URL: e.dbUrl,
    DATA_DIR: e.dataDir,
    ARBOR_SIGNING_KEYS_DIR: e.keysDir,
    ARBOR_ADMIN_TOKEN: TOKEN,
    ARBOR_ALLOW_PRIVATE_SINKS: 'true',
    ARBOR_EVENTS_POLL_MS: '50',
    ARBOR_EVENTS_BACKOFF_MS: '100',
    ARBOR_EVENTS_BACKOFF_MAX_MS: '500',
    ...extra,
  });
}

async function must(c: Client, path: string, body: unknown): Promise<string> {
  const r = await c.post(path, body);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body as { uid: string }).uid;
}

/** The ids of the audit records below `org`, oldest first: what must arrive. */
async function expectedIds(c: Client, org: string): Promise<string[]> {
  const ids: string[] = [];
  let token = '';
  for (;;) {
    const r = await c.get(
      `/audit/v2beta1/events?uidp.descendants_of=${org}&order_by=time%20asc&page_size=200${token ? `&page_token=${token}` : ''}`,
    );
    ids.push(...(r.body.events as Array<{ id: string }>).map((e) => e.id));
    if (!r.body.nextPageToken) return ids;
    token = encodeURIComponent(r.body.nextPageToken as string);
  }
}

const firstArrivals = (k: EventSink) => {
  const seen = new Set<string>();
  const order: string[] = [];
  for (const r of k.accepted()) {
    const id = r.body.id as string;
    if (!seen.has(id)) order.push(id);
    seen.add(id);
  }
  return order;
};

onPostgres('events: kill -9 mid-delivery loses nothing; duplicates are counted', async (t) => {
  const e = await environment();
  const k = await startEventSink('up', 15);
  let a: ArborProcess | undefined;
  let b: ArborProcess | undefined;
  try {
    // A short lease, so the restarted process takes over the dead one's claim quickly.
    a = await serve(e, { ARBOR_EVENTS_LEASE_MS: '3000' });
    const admin = makeClient(a.url, TOKEN);
    const org = await must(admin, '/iam/v2beta1/groups', { name: 'crash' });
    await must(admin, `/events/v2beta1/subscriptions/${org}`, { name: 'hook', sink: k.url });
    for (let i = 0; i < 60; i++) await must(admin, `/iam/v2beta1/groups/${org}`, { name: `g${i}` });
    await until('deliveries under way', () => k.accepted().length >= 5);
    await a.stop('SIGKILL');
    const atKill = k.accepted().length;

    b = await serve(e, { ARBOR_EVENTS_LEASE_MS: '3000' });
    const expected = await expectedIds(makeClient(b.url, TOKEN), org);
    t.is(expected.length, 61, 'the subscription and 60 groups were recorded');
    await until('every event', () => new Set(k.accepted().map((r) => r.body.id)).size >= 61);
    await new Promise((r) => setTimeout(r, 500));

    const received = k.accepted().map((r) => r.body.id as string);
    const duplicates = received.length - new Set(received).size;
    t.log(`delivered before the kill: ${atKill}; duplicates after restart: ${duplicates}`);
    t.deepEqual(firstArrivals(k), expected, 'every event, in order');
    // The sink agreed before the first delivery; the restarted process did not ask again.
    t.is(k.handshakes.length, 1);
    // At most the one event in flight when the process died is sent again.
    t.true(duplicates <= 1);
  } finally {
    await a?.stop('SIGKILL');
    await b?.stop();
    await k.close();
    await e.cleanup();
  }
});

onPostgres('events: two replicas on one database deliver every event exactly once', async (t) => {
  const e = await environment();
  const sinks = [await startEventSink('up', 2), await startEventSink('up', 2)];
  let a: ArborProcess | undefined;
  let b: ArborProcess | undefined;
  try {
    a = await serve(e);
    b = await serve(e);
    const clients = [makeClient(a.url, TOKEN), makeClient(b.url, TOKEN)];
    const orgs: string[] = [];
    for (const [i, k] of sinks.entries()) {
      const org = await must(clients[i]!, '/iam/v2beta1/groups', { name: `replicas-${i}` });
      await must(clients[i]!, `/events/v2beta1/subscriptions/${org}`, {
        name: 'hook',
        sink: k.url,
      });
      orgs.push(org);
    }
    // Writes through both replicas, interleaved.
    for (let i = 0; i < 40; i++) {
      for (const [j, org] of orgs.entries()) {
        await must(clients[(i + j) % 2]!, `/iam/v2beta1/groups/${org}`, { name: `g${i}` });
      }
    }
    for (const [i, k] of sinks.entries()) {
      const expected = await expectedIds(clients[0]!, orgs[i]!);
      t.is(expected.length, 41);
      await until(`sink ${i} complete`, () => k.accepted().length >= 41);
      await new Promise((r) => setTimeout(r, 500));
      const received = k.accepted().map((r) => r.body.id as string);
      t.is(received.length, 41, 'no event delivered twice');
      t.deepEqual(received, expected, 'in order');
      // One replica at a time holds a subscription: its sink was asked to agree once.
      t.is(k.handshakes.length, 1, 'one webhook validation handshake');
    }
  } finally {
    await a?.stop();
    await b?.stop();
    for (const k of sinks) await k.close();
    await e.cleanup();
  }
});
