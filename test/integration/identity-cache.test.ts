import test from 'ava';
import type { Knex } from 'knex';
import { createGroup } from '../helpers/fixtures.js';
import { PG_POOLER_URL, TEST_BACKEND } from '../helpers/db.js';
import { startFeedWorkers, withinBound, type FeedWorkers } from '../helpers/feed-workers.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import type { TestServer } from '../helpers/server.js';
import { NOT_POOLED, postgresOnly } from '../helpers/need-tool.js';

/**
 * The identity an STS exchange names, kept in the read cache (migration 0034): on a real
 * PostgreSQL, two workers over one database, worker b hearing of changes 100 ms late (its
 * feed goes through a slow proxy), and a writer that bypasses Arbor (psql). A narrowed
 * claim match or a deleted identity must stop exchanges on every worker within the
 * staleness bound, however often the identity was answered from memory before.
 */
const pg = TEST_BACKEND === 'postgres' && PG_POOLER_URL === undefined;
const serial = postgresOnly(test.serial, { when: PG_POOLER_URL === undefined, why: NOT_POOLED });

let workers: FeedWorkers | undefined;
let a: TestServer;
let b: TestServer;
let sql: Knex;
let issuer: TestIssuer;
let org: string;
const SUB = 'system:serviceaccount:apps:cached';

test.before(async () => {
  if (!pg) return;
  workers = await startFeedWorkers({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  ({ a, b, sql } = workers);
  issuer = await TestIssuer.start();
  org = await createGroup(a.admin, 'identity-cache-org');
});
test.after.always(async () => {
  await workers?.close();
  await issuer?.stop();
});

async function newIdentity(name: string): Promise<string> {
  const r = await a.admin.post(`/iam/v2beta1/identities/${org}`, {
    name,
    claimMatch: { issuer: issuer.url, subject: SUB },
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return (r.body as { uid: string }).uid;
}

/** The status of an exchange through `s` for `identity` with a fresh token for SUB. */
async function exchange(s: TestServer, identity: string): Promise<number> {
  const aud = s.arbor.config.issuerUrl;
  const token = await issuer.mint({ sub: SUB, aud });
  const q = new URLSearchParams({ aud, identity });
  return (await s.client(token).get(`/sts/exchange?${q.toString()}`)).status;
}

const hits = (s: TestServer) => s.arbor.readCaches.identities!.hits;

/** Exchanges through `s` until one is answered from memory; every one must succeed. */
async function servedFromMemory(s: TestServer, identity: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const before = hits(s);
    const status = await exchange(s, identity);
    if (status !== 200) throw new Error(`exchange answered ${status}`);
    if (hits(s) > before) return;
    if (Date.now() > deadline) throw new Error('never answered from memory');
  }
}

/**
 * Exchanges through `s` until one is refused (403), held to the staleness bound from
 * `changed` (withinBound); every exchange before it must succeed.
 */
function refusedWithinBound(s: TestServer, identity: string, changed: number) {
  return withinBound(changed, async () => {
    const status = await exchange(s, identity);
    if (status !== 200 && status !== 403) throw new Error(`exchange answered ${status}`);
    return status === 403;
  });
}

serial('an exchange reads its identity from memory once known', async (t) => {
  const identity = await newIdentity('kept');
  for (const s of [a, b]) await servedFromMemory(s, identity);
  const text = await a.arbor.metrics.registry.metrics();
  t.regex(text, /arbor_read_cache_reads\{cache="identities",outcome="hits"\} [1-9]/);
});

serial(
  'a narrowed claim match stops exchanges at once here, within the bound elsewhere',
  async (t) => {
    const identity = await newIdentity('narrowed');
    for (const s of [a, b]) await servedFromMemory(s, identity);
    const w = await a.admin.patch(`/iam/v2beta1/identities/${identity}?updateMask=claimMatch`, {
      claimMatch: { issuer: issuer.url, subject: 'system:serviceaccount:apps:someone-else' },
    });
    t.is(w.status, 200);
    const changed = Date.now();
    t.is(await exchange(a, identity), 403, 'the writing worker refuses the very next exchange');
    const ms = await refusedWithinBound(b, identity, changed);
    t.log(`worker b refused ${ms} ms after the change`);
  },
);

serial('an identity deleted outside Arbor stops exchanges on every worker', async (t) => {
  const identity = await newIdentity('deleted');
  for (const s of [a, b]) await servedFromMemory(s, identity);
  // psql, with no consistency token to carry: only the feed can tell the workers.
  await sql('role_bindings').where({ identity_uid: identity }).delete();
  t.is(await sql('identities').where({ uid: identity }).delete(), 1);
  const changed = Date.now();
  for (const s of [a, b]) {
    const ms = await refusedWithinBound(s, identity, changed);
    t.log(`refused ${ms} ms after the delete`);
  }
  for (const s of [a, b]) t.is(await exchange(s, identity), 403);
});
