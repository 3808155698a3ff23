import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import { openDatabase } from '../../src/db/connect.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { PG_POOLER_URL, TEST_BACKEND, type TestDatabase } from '../helpers/db.js';
import {
  BOUND_MS,
  feedUp,
  startFeedWorkers,
  withinBound,
  type FeedWorkers,
} from '../helpers/feed-workers.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { builtinRole } from '../helpers/authority.js';
import { NOT_POOLED, postgresOnly } from '../helpers/need-tool.js';

/**
 * The read cache (db/change-feed.ts, db/read-cache.ts) on a real PostgreSQL: two workers,
 * each with its own database handle, change feed and caches, over one database; and a
 * writer that bypasses Arbor entirely (another process, or a person with psql). Worker b
 * hears of changes 100 ms late each way (its feed goes through a slow proxy), so a cache
 * that served without proof would answer stale there, and the tests would see it.
 */
const pg = TEST_BACKEND === 'postgres' && PG_POOLER_URL === undefined;
const serial = postgresOnly(test.serial, { when: PG_POOLER_URL === undefined, why: NOT_POOLED });

let db: TestDatabase;
let a: TestServer;
let b: TestServer;
let sql: Knex;
let org: string;
let reader: string;
const G = '/iam/v2beta1/groups';

let workers: FeedWorkers | undefined;

test.before(async () => {
  if (!pg) return;
  workers = await startFeedWorkers();
  ({ db, a, b, sql } = workers);
  org = await createGroup(a.admin, 'cache-org');
  reader = await createRole(a.admin, org, 'reader', ['groups.list']);
});
test.after.always(async () => {
  await workers?.close();
});

async function tokenFor(s: TestServer, uid: string): Promise<string> {
  return (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${uid}` })).token;
}

/** Polls `fn` until it is true; the milliseconds it took. @throws after `limitMs`. */
async function within(limitMs: number, fn: () => boolean | Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await fn())) {
    if (Date.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - started;
}

/**
 * Waits out the staleness bound measured from `committed` (Date.now() once the change's
 * write returned, so no earlier than its commit): a worker that serves from memory from
 * then on has heard the change, so its answers no longer go back to an older state.
 */
async function settledSince(committed: number): Promise<void> {
  const until = committed + BOUND_MS;
  while (Date.now() < until) await new Promise((r) => setTimeout(r, until - Date.now()));
}

/**
 * Binds `role` to `identity` at the organisation until 2.5 s from now (through worker a),
 * and holds `grants()` (asked of worker b) to it: true once b has settled on the binding,
 * with `cache` answering from memory meanwhile, and false from the binding's instant on,
 * though no write announces that.
 */
async function expiresOnTime(
  t: ExecutionContext,
  identity: string,
  role: string,
  grants: () => Promise<boolean>,
  cache: () => { hits: number },
): Promise<void> {
  const expireAt = Date.now() + 2_500;
  const expiring = await a.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: identity,
    roleUid: role,
    expireTime: new Date(expireAt).toISOString(),
  });
  t.is(expiring.status, 200);
  const madeAt = Date.now();
  await withinBound(madeAt, grants);
  await settledSince(madeAt);
  const hits = cache().hits;
  while (Date.now() < expireAt - 200) t.true(await grants());
  t.true(cache().hits > hits, 'answered from memory while the binding lasted');
  while (Date.now() < expireAt) await new Promise((r) => setTimeout(r, 10));
  t.false(await grants(), 'not from its instant on');
}

const description = async (c: Client, uid: string) =>
  ((await c.get(`${G}/${uid}`)).body as { description?: string }).description;

/**
 * Reads the group through `s` until one read is a hit of its cache, each answering `want`.
 * (A loaded machine may delay a proof past the staleness bound, and the cache rightly
 * stands aside for a moment: hits are waited for, correctness is asserted on every read.)
 */
async function servedFromMemory(s: TestServer, uid: string, want: string): Promise<void> {
  await within(5_000, async () => {
    const hits = s.arbor.readCaches.groups!.hits;
    const got = await description(s.admin, uid);
    if (got !== want) throw new Error(`read ${got}, not ${want}`);
    return s.arbor.readCaches.groups!.hits > hits;
  });
}

serial('a Get is answered from memory once the row is known, and stays correct', async (t) => {
  const uid = await createGroup(a.admin, 'cached', org);
  const before = { ...a.arbor.readCaches.groups! };
  for (let i = 0; i < 20; i++) t.is((await a.admin.get(`${G}/${uid}`)).status, 200);
  await servedFromMemory(a, uid, '');
  const after = a.arbor.readCaches.groups!;
  t.log(`20 reads: ${after.hits - before.hits} hits, ${after.bypassed - before.bypassed} bypassed`);
  const text = await a.arbor.metrics.registry.metrics();
  t.regex(text, /arbor_read_cache_reads\{cache="groups",outcome="hits"\} [1-9]/);
  t.regex(text, /arbor_read_cache_serving [01]\n/);
});

serial('a write through this process is read back at once, every time', async (t) => {
  const uid = await createGroup(b.admin, 'own-writes', org);
  t.is((await b.admin.get(`${G}/${uid}`)).status, 200);
  for (let i = 0; i < 30; i++) {
    const w = await b.admin.patch(`${G}/${uid}?updateMask=description`, { description: `v${i}` });
    t.is(w.status, 200);
    t.is(await description(b.admin, uid), `v${i}`);
  }
});

serial('a write through another process is read back at once with its token', async (t) => {
  const uid = await createGroup(a.admin, 'token-writes', org);
  t.is((await b.admin.get(`${G}/${uid}`)).status, 200);
  for (let i = 0; i < 30; i++) {
    const w = await a.admin.patch(`${G}/${uid}?updateMask=description`, { description: `t${i}` });
    const token = w.headers.get('arbor-consistency-token');
    t.truthy(token, 'a write answers with a consistency token');
    const r = await b.admin.raw(`${G}/${uid}`, {
      method: 'GET',
      headers: { 'Arbor-Consistency-Token': token! },
    });
    t.is((r.body as { description: string }).description, `t${i}`);
  }
});

serial('a change made outside Arbor reaches every worker well within a second', async (t) => {
  const uid = await createGroup(a.admin, 'outside', org);
  for (const s of [a, b]) t.is(await description(s.admin, uid), '');
  await servedFromMemory(a, uid, '');
  const etag = (await a.admin.get(`${G}/${uid}`)).headers.get('etag');
  await sql('groups').where({ uid }).update({ description: 'from psql' });
  const changed = Date.now();
  for (const s of [a, b]) {
    const ms = await withinBound(
      changed,
      async () => (await description(s.admin, uid)) === 'from psql',
    );
    t.log(`seen after ${ms} ms`);
  }
  // The answer made once for the cached row is made anew for the changed one.
  await servedFromMemory(a, uid, 'from psql');
  t.not((await a.admin.get(`${G}/${uid}`)).headers.get('etag'), etag);
  // A deleted group is gone from memory too.
  await sql.raw('DELETE FROM groups WHERE uid = ?', [uid]);
  await withinBound(Date.now(), async () => (await a.admin.get(`${G}/${uid}`)).status === 404);
  t.pass();
});

serial(
  'a revoked binding stops granting on both workers within a second, under load',
  async (t) => {
    const id = await createIdentity(a.admin, org, 'revoked');
    const binding = await createBinding(a.admin, org, id, reader);
    const clients = [a.client(await tokenFor(a, id)), b.client(await tokenFor(b, id))];
    for (const c of clients) t.is((await c.get(`${G}/${org}`)).status, 200);
    let revokedAt = Number.POSITIVE_INFINITY;
    const late: string[] = [];
    let stop = false;
    // Eight readers per worker keep both caches hot while the binding is deleted.
    const load = clients.flatMap((c, w) =>
      Array.from({ length: 8 }, async () => {
        while (!stop) {
          const started = Date.now();
          const r = await c.get(`${G}/${org}`);
          if (r.status === 200 && started > revokedAt + 1_000)
            late.push(`worker ${w} granted ${started - revokedAt} ms after the revoke`);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    const del = await a.admin.delete(`/iam/v2beta1/roleBindings/${binding}`);
    t.is(del.status, 200);
    revokedAt = Date.now();
    await new Promise((r) => setTimeout(r, 1_500));
    stop = true;
    await Promise.all(load);
    t.deepEqual(late, []);
    for (const c of clients) t.is((await c.get(`${G}/${org}`)).status, 404);
    t.true(a.arbor.readCaches.grants!.hits > 0 && b.arbor.readCaches.grants!.hits > 0);
  },
);

serial(
  'the cache stops serving while its feed is silent or cut, and serves again once back',
  async (t) => {
    const target = new URL(db.url!);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    const listen = new URL(db.url!);
    listen.port = String(port);
    const cdb = await openDatabase({ url: db.url!, listenUrl: listen.toString(), dataDir: '' });
    const c = await startServer({}, { database: { ...cdb, url: db.url! } });
    const feed = c.db.changeFeed!;
    try {
      await feedUp(c);
      const uid = await createGroup(a.admin, 'cut', org);
      await servedFromMemory(c, uid, '');

      // Silent: the connection stays open but nothing comes back. Within the staleness
      // bound (500 ms) the feed stops vouching, though it has seen no error.
      proxy.freeze();
      const silentFor = await withinBound(Date.now(), () => !feed.fresh());
      t.log(`stopped vouching ${silentFor} ms into the silence`);
      await sql('groups').where({ uid }).update({ description: 'while silent' });
      const bypassed = c.arbor.readCaches.groups!.bypassed;
      t.is(await description(c.admin, uid), 'while silent');
      t.true(c.arbor.readCaches.groups!.bypassed > bypassed, 'read from the database');
      // It gives up on the silent connection and opens another (the proxy still accepts).
      await within(3_000, () => feed.stats.drops >= 1);
      await feedUp(c);

      // Cut: the proxy refuses and drops everything; a change meanwhile is heard by nobody.
      await proxy.stop();
      await within(1_000, () => !feed.fresh());
      await sql('groups').where({ uid }).update({ description: 'while cut' });
      t.is(await description(c.admin, uid), 'while cut');
      await proxy.start(port);
      await feedUp(c);
      await servedFromMemory(c, uid, 'while cut');
      t.true(feed.stats.drops >= 2);
    } finally {
      await c.close();
      await proxy.stop();
    }
  },
);

serial('a terminated feed connection is noticed and replaced', async (t) => {
  const pids = (
    await sql.raw(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'arbor-change-feed' AND datname = current_database()",
    )
  ).rows as { pid: number }[];
  t.is(pids.length, 2, 'one feed per worker');
  const drops = () => a.db.changeFeed!.stats.drops + b.db.changeFeed!.stats.drops;
  const before = drops();
  await sql.raw('SELECT pg_terminate_backend(pid) FROM unnest(?::int[]) AS pid', [
    pids.map((p) => p.pid),
  ]);
  await within(1_000, () => drops() >= before + 2);
  await Promise.all([feedUp(a), feedUp(b)]);
});

serial(
  'no cache where it cannot hear: off by setting, or behind a transaction pooler',
  async (t) => {
    for (const opts of [{ readCache: false }, { pooler: 'transaction' as const }]) {
      const d = await openDatabase({ url: db.url!, dataDir: '', ...opts });
      try {
        t.is(d.changeFeed, undefined, JSON.stringify(opts));
      } finally {
        await d.close();
      }
    }
    // A direct connection named for LISTEN brings it back behind a pooler.
    const d = await openDatabase({
      url: db.url!,
      dataDir: '',
      pooler: 'transaction',
      listenUrl: db.url!,
    });
    t.truthy(d.changeFeed);
    await d.close();
  },
);

serial(
  'a self check is answered from memory, and follows revokes, expiry and renames',
  async (t) => {
    const id = await createIdentity(a.admin, org, 'checker');
    const folder = await createGroup(a.admin, 'checked', org);
    // A role the identity may see, so that its proofs name it.
    const seer = await createRole(a.admin, org, 'seer', ['groups.list', 'roles.list']);
    const binding = await createBinding(a.admin, org, id, seer);
    const onB = b.client(await tokenFor(b, id));
    type Answer = { allowed: boolean; grants: Array<{ role: { name?: string } }> };
    const ask = async (): Promise<Answer> =>
      (await onB.post('/iam/v2beta1/access:check', { capability: 'groups.list', groupUid: folder }))
        .body as Answer;
    t.true((await ask()).allowed);
    // Read until one check is a hit of b's binding cache; each says allowed.
    await within(5_000, async () => {
      const hits = b.arbor.readCaches.bindings!.hits;
      t.true((await ask()).allowed);
      return b.arbor.readCaches.bindings!.hits > hits;
    });
    t.is((await ask()).grants[0]?.role.name, 'seer');
    // A rename of the role (made outside Arbor) shows in the proof.
    await sql('roles').where({ uid: seer }).update({ name: 'seer-renamed' });
    await withinBound(
      Date.now(),
      async () => (await ask()).grants[0]?.role.name === 'seer-renamed',
    );
    // Revoked through worker a: b's answer follows within the bound.
    t.is((await a.admin.delete(`/iam/v2beta1/roleBindings/${binding}`)).status, 200);
    await withinBound(Date.now(), async () => !(await ask()).allowed);
    // A binding that expires stops counting at its instant, remembered or not.
    await expiresOnTime(
      t,
      id,
      seer,
      async () => (await ask()).allowed,
      () => b.arbor.readCaches.bindings!,
    );
  },
);

serial(
  "a self check's answer is kept, and made anew on a revoke, an expiry or the group's delete",
  async (t) => {
    const id = await createIdentity(a.admin, org, 'answered');
    const folder = await createGroup(a.admin, 'answered-at', org);
    // A built-in role: an answer naming only such roles is kept whole.
    const viewer = await builtinRole(a.admin, 'viewer');
    const binding = await createBinding(a.admin, org, id, viewer);
    const onB = b.client(await tokenFor(b, id));
    const answers = () => b.arbor.readCaches.self_checks!;
    type Answer = { allowed: boolean; grants: Array<{ bindingUid: string }> };
    const ask = async (): Promise<{ status: number; body: Answer }> => {
      const r = await onB.post('/iam/v2beta1/access:check', {
        capability: 'groups.list',
        groupUid: folder,
      });
      return { status: r.status, body: r.body as Answer };
    };
    const allowedBy = async () => (await ask()).body.grants.map((g) => g.bindingUid);
    // Read until one answer comes from memory; each names the binding.
    await within(5_000, async () => {
      const hits = answers().hits;
      t.deepEqual(await allowedBy(), [binding]);
      return answers().hits > hits;
    });
    // Revoked through worker a: b makes its answer anew within the bound.
    t.is((await a.admin.delete(`/iam/v2beta1/roleBindings/${binding}`)).status, 200);
    await withinBound(Date.now(), async () => !(await ask()).body.allowed);
    // A kept answer citing a binding that expires is not served from its instant on.
    await expiresOnTime(t, id, viewer, async () => (await ask()).body.allowed, answers);
    // A group deleted outside Arbor: the caller may list groups there, so it is NOT_FOUND.
    // (The expired viewer binding stays until swept: another built-in role grants now.)
    await createBinding(a.admin, org, id, await builtinRole(a.admin, 'registry.pull'));
    const boundAt = Date.now();
    await withinBound(boundAt, async () => (await ask()).body.allowed);
    await settledSince(boundAt);
    await within(5_000, async () => {
      const hits = answers().hits;
      t.true((await ask()).body.allowed);
      return answers().hits > hits;
    });
    await sql.raw('DELETE FROM groups WHERE uid = ?', [folder]);
    const deletedAt = Date.now();
    await withinBound(deletedAt, async () => (await ask()).status === 404);
    // Once b has heard of the delete (the bound past it), it remembers the group's absence
    // after one more read: the answer kept for the group is never served.
    await settledSince(deletedAt);
    for (let i = 0; i < 20; i++) t.is((await ask()).status, 404);
  },
);

serial(
  "a conditional self check is answered from memory, yet follows its condition: the group's path, the time",
  async (t) => {
    const id = await createIdentity(a.admin, org, 'conditional-self');
    const parent = await createGroup(a.admin, 'cond-parent', org);
    const folder = await createGroup(a.admin, 'cond-child', parent);
    const viewer = await builtinRole(a.admin, 'viewer');
    const bind = async (expression: string): Promise<string> => {
      const r = await a.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
        identityUid: id,
        roleUid: viewer,
        condition: { expression },
      });
      t.is(r.status, 200, JSON.stringify(r.body));
      return (r.body as { uid: string }).uid;
    };
    const onB = b.client(await tokenFor(b, id));
    type Explained = { result: boolean; values: Record<string, unknown> };
    type Proof = { bindingUid: string; condition?: Explained };
    type Answer = { allowed: boolean; grants: Proof[]; conditional?: Proof[] };
    const ask = async (): Promise<Answer> => {
      const r = await onB.post('/iam/v2beta1/access:check', {
        capability: 'groups.list',
        groupUid: folder,
      });
      t.is(r.status, 200, JSON.stringify(r.body));
      return r.body as Answer;
    };
    // From memory: whole (`hits`), or with the condition decided again (`rechecked`).
    const remembered = () => {
      const s = b.arbor.readCaches.self_checks! as unknown as { hits: number; rechecked: number };
      return s.hits + s.rechecked;
    };
    const first = await bind('resource.group.path.startsWith("cache-org/cond-parent/")');
    // Asked until an answer comes from memory.
    await within(5_000, async () => {
      const before = remembered();
      const r = await ask();
      t.true(r.allowed);
      t.is(r.grants[0]?.bindingUid, first);
      t.is(
        r.grants[0]?.condition?.values['resource.group.path'],
        'cache-org/cond-parent/cond-child',
      );
      return remembered() > before;
    });
    // The parent renamed through worker a: nothing b keeps for the check changes (the
    // identity's bindings, the folder's own row), yet the condition reads the new path.
    const renamed = await a.admin.patch(`/iam/v2beta1/groups/${parent}?updateMask=name`, {
      name: 'cond-moved',
    });
    t.is(renamed.status, 200, JSON.stringify(renamed.body));
    await withinBound(Date.now(), async () => {
      const r = await ask();
      return (
        !r.allowed &&
        r.conditional?.[0]?.condition?.values['resource.group.path'] ===
          'cache-org/cond-moved/cond-child'
      );
    });
    t.is((await a.admin.delete(`/iam/v2beta1/roleBindings/${first}`)).status, 200);
    // A condition on the time: a kept answer is never served past the instant it names,
    // though no write announces it; each answer names the time it was decided at.
    const until = Date.now() + 2_500;
    const second = await bind(`request.time < timestamp("${new Date(until).toISOString()}")`);
    const madeAt = Date.now();
    await withinBound(madeAt, async () => (await ask()).allowed);
    await settledSince(madeAt);
    const before = remembered();
    const times = new Set<unknown>();
    while (Date.now() < until - 300) {
      const r = await ask();
      t.true(r.allowed);
      t.is(r.grants[0]?.bindingUid, second);
      times.add(r.grants[0]?.condition?.values['request.time']);
      await new Promise((r) => setTimeout(r, 20));
    }
    t.true(remembered() > before, 'kept answers were reused while the condition held');
    t.true(times.size > 1, 'each reuse names its own request.time');
    while (Date.now() <= until) await new Promise((r) => setTimeout(r, 5));
    const after = await ask();
    t.false(after.allowed, 'denied from the instant on, at once');
    t.is(after.conditional?.[0]?.bindingUid, second);
    t.is(after.conditional?.[0]?.condition?.result, false);
  },
);

serial(
  "who-can's first page is answered from memory, and follows new bindings, deletes and expiry",
  async (t) => {
    const folder = await createGroup(a.admin, 'who-can-cached', org);
    const first = await createIdentity(a.admin, org, 'holder-1');
    await createBinding(a.admin, org, first, reader);
    type Page = { identities: Array<{ identityUid: string }> };
    const holders = async (): Promise<string[]> => {
      const r = await b.admin.get(
        `/iam/v2beta1/access:whoCan?group=${folder}&capability=groups.list`,
      );
      t.is(r.status, 200);
      return (r.body as Page).identities.map((h) => h.identityUid);
    };
    const holds = async (uid: string) => (await holders()).includes(uid);
    // Read until one page is a hit of b's holders cache; each names the holder.
    await within(5_000, async () => {
      const hits = b.arbor.readCaches.holders!.hits;
      t.true(await holds(first));
      return b.arbor.readCaches.holders!.hits > hits;
    });
    // A binding made through worker a shows on b within the bound.
    const second = await createIdentity(a.admin, org, 'holder-2');
    const made = await createBinding(a.admin, org, second, reader);
    await withinBound(Date.now(), () => holds(second));
    // One deleted outside Arbor is gone within the bound.
    await sql.raw('DELETE FROM role_bindings WHERE uid = ?', [made]);
    await withinBound(Date.now(), async () => !(await holds(second)));
    // A binding that expires stops counting at its instant, remembered or not.
    const third = await createIdentity(a.admin, org, 'holder-3');
    await expiresOnTime(
      t,
      third,
      reader,
      () => holds(third),
      () => b.arbor.readCaches.holders!,
    );
    const after = await holders();
    t.false(after.includes(third), 'expired: not a holder');
    t.true(after.includes(first));
  },
);

/**
 * Binds `role` to `identity` at the organisation from 2.5 s from now (a scheduled grant,
 * through worker a), and holds `grants()` (asked of worker b) to it: false, with `cache`
 * answering from memory meanwhile, until the binding's instant, and true from it on, though
 * no write announces that. A cache that ignored the start would grant early or late.
 */
async function startsOnTime(
  t: ExecutionContext,
  identity: string,
  role: string,
  grants: () => Promise<boolean>,
  cache: () => { hits: number },
): Promise<void> {
  const startAt = Date.now() + 2_500;
  const scheduled = await a.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: identity,
    roleUid: role,
    notBefore: new Date(startAt).toISOString(),
  });
  t.is(scheduled.status, 200);
  await settledSince(Date.now());
  const hits = cache().hits;
  while (Date.now() < startAt - 200) t.false(await grants());
  t.true(cache().hits > hits, 'answered from memory before the binding started');
  while (Date.now() < startAt) await new Promise((r) => setTimeout(r, 10));
  t.true(await grants(), 'granted from its instant on');
}

serial(
  'a scheduled binding starts granting at its instant through the grant, check and who-can caches',
  async (t) => {
    const folder = await createGroup(a.admin, 'scheduled-at', org);
    const viewer = await builtinRole(a.admin, 'viewer');
    // The grant cache: the identity's own reads on worker b.
    const reading = await createIdentity(a.admin, org, 'scheduled-reader');
    const onB = b.client(await tokenFor(b, reading));
    await startsOnTime(
      t,
      reading,
      reader,
      async () => (await onB.get(`${G}/${folder}`)).status === 200,
      () => b.arbor.readCaches.grants!,
    );
    // The remembered self check (a built-in role: the answer itself is kept).
    const checking = await createIdentity(a.admin, org, 'scheduled-checker');
    const onB2 = b.client(await tokenFor(b, checking));
    await startsOnTime(
      t,
      checking,
      viewer,
      async () =>
        (
          (
            await onB2.post('/iam/v2beta1/access:check', {
              capability: 'groups.list',
              groupUid: folder,
            })
          ).body as { allowed: boolean }
        ).allowed,
      () => b.arbor.readCaches.self_checks!,
    );
    // Who-can's remembered first page (and its count).
    const holding = await createIdentity(a.admin, org, 'scheduled-holder');
    await startsOnTime(
      t,
      holding,
      reader,
      async () => {
        const r = await b.admin.get(
          `/iam/v2beta1/access:whoCan?group=${folder}&capability=groups.list`,
        );
        return (r.body as { identities: Array<{ identityUid: string }> }).identities.some(
          (h) => h.identityUid === holding,
        );
      },
      () => b.arbor.readCaches.holders!,
    );
  },
);
