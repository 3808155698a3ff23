import test from 'ava';
import knexFactory, { type Knex } from 'knex';
import { openDatabase, type Database } from '../../src/db/connect.js';
import { ReadReplicas } from '../../src/db/read-replicas.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole, ISSUER } from '../helpers/iam-fixtures.js';
import * as grpc from '@grpc/grpc-js';
import { fromBinary, fromJson, toBinary, toJson, type JsonValue } from '@bufbuild/protobuf';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import {
  replicaUnavailable,
  startStreamingPair,
  type StreamingPair,
} from '../helpers/streaming-replica.js';
import { needTool } from '../helpers/need-tool.js';

/**
 * Read replicas on a real streaming replica (initdb + pg_basebackup -R, PostgreSQL 15):
 * read-your-writes through the consistency token, a lagging replica skipped, and grants
 * never read from a replica. docs/operations.md, "Read replicas".
 */
const why = replicaUnavailable();
// In CI the binaries are installed: a missing one is a failure, not a skip.
const run = needTool(test.serial, 'PostgreSQL server binaries', why);

const G = '/iam/v2beta1/groups';
const HEADER = 'arbor-consistency-token';
/** Short, so the test can wait past it; the default is 1000 ms. */
const MAX_LAG_MS = 300;

let pair: StreamingPair;
let db: Database;
let s: GrpcTestServer;
let standby: Knex;
let org: string;

test.before(async () => {
  if (why !== undefined) return;
  pair = await startStreamingPair();
  db = await openDatabase({
    url: pair.primaryUrl,
    readUrls: [pair.standbyUrl],
    maxReplicaLagMs: MAX_LAG_MS,
    dataDir: '',
    // These tests count the replica router's reads: no read cache in front of it here (the
    // last test runs a second process with one).
    readCache: false,
  });
  s = await startGrpcServer({}, {}, db);
  standby = knexFactory({ client: 'pg', connection: pair.standbyUrl, pool: { min: 0, max: 2 } });
  org = await createGroup(s.admin, 'replica-org');
});

test.after.always(async () => {
  await standby?.destroy();
  await s?.close();
  await pair?.stop();
});

function stats() {
  return { ...db.replicas!.stats };
}

async function pauseReplay(): Promise<void> {
  await standby.raw('SELECT pg_wal_replay_pause()');
  // Pausing takes effect at the next record; wait until the standby says it is paused.
  for (;;) {
    const r = await standby.raw('SELECT pg_get_wal_replay_pause_state() AS s');
    if (r.rows[0].s === 'paused') return;
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function resumeReplay(): Promise<void> {
  await standby.raw('SELECT pg_wal_replay_resume()');
}

/** The group's description as the standby has it now (read there directly). */
async function onStandby(uid: string): Promise<string | undefined> {
  const row = await standby('groups').where({ uid }).first('description');
  return row?.description;
}

run(
  'every write answers with a token; a read carrying it sees the write (2000 times)',
  async (t) => {
    const before = stats();
    const groups = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => createGroup(s.admin, `ryw-${i}`, org)),
    );
    let mismatches = 0;
    // Eight clients, each writing its own group then reading it back with the token.
    await Promise.all(
      groups.map(async (uid, c) => {
        for (let i = 0; i < 250; i++) {
          const want = `c${c}-v${i}`;
          const w = await s.admin.patch(`${G}/${uid}`, { description: want });
          if (w.status !== 200) throw new Error(`PATCH ${w.status}`);
          const token = w.headers.get(HEADER);
          if (!token) throw new Error('a write answered without a consistency token');
          const r = await s.admin.raw(`${G}/${uid}`, { headers: { [HEADER]: token } });
          if (r.body?.description !== want) mismatches++;
        }
      }),
    );
    t.is(mismatches, 0);
    const after = stats();
    // Both paths were taken: replicas that had replayed the write answered, the others not.
    t.true(
      after.replica > before.replica,
      `no read was served by the replica: ${JSON.stringify(after)}`,
    );
    t.log(
      `served by the replica: ${after.replica - before.replica}, primary: ${after.primary - before.primary} (behind: ${after.behind - before.behind})`,
    );
  },
);

run(
  'a paused replica is skipped: token reads and untokened reads past the lag bound go to the primary',
  async (t) => {
    const uid = await createGroup(s.admin, 'paused', org, 'before');
    // Wait until the standby has the group (the untokened read below must be able to see it).
    const w0 = await s.admin.patch(`${G}/${uid}`, { description: 'before' });
    await t.notThrowsAsync(async () => {
      while ((await onStandby(uid)) !== 'before') await new Promise((r) => setTimeout(r, 10));
    });
    t.truthy(w0.headers.get(HEADER));
    // A second router with a bound far larger than the pause, sampling the primary now.
    const lenient = new ReadReplicas(db.knex, [pair.standbyUrl], { maxLagMs: 600_000 });
    await lenient.probe();
    await pauseReplay();
    try {
      const w = await s.admin.patch(`${G}/${uid}`, { description: 'after' });
      const token = w.headers.get(HEADER)!;
      // The standby is stale: anything it served would say 'before'.
      t.is(await onStandby(uid), 'before');

      const s1 = stats();
      const tokened = await s.admin.raw(`${G}/${uid}`, { headers: { [HEADER]: token } });
      t.is(tokened.body.description, 'after');
      const s2 = stats();
      t.is(s2.replica, s1.replica, 'the token read was not served by the paused replica');
      t.is(s2.primary, s1.primary + 1);

      // Past the bound, the replica's position is older than every recent primary sample.
      await new Promise((r) => setTimeout(r, MAX_LAG_MS * 2));
      const plain = await s.admin.get(`${G}/${uid}`);
      t.is(plain.body.description, 'after');
      const list = await s.admin.get(G);
      t.is(list.status, 200);
      const s3 = stats();
      t.is(s3.replica, s2.replica, 'no untokened read was served by the paused replica');
      t.is(await onStandby(uid), 'before');

      // Within its bound, the lenient router reads the replica, stale: proof that the replica
      // path really reads the standby.
      try {
        const stale = await lenient.read(undefined, (k) => k('groups').where({ uid }).first());
        t.is(stale.description, 'before');
        t.is(lenient.stats.replica, 1);
        // …but never with the write's token.
        const fresh = await lenient.read(token, (k) => k('groups').where({ uid }).first());
        t.is(fresh.description, 'after');
        t.is(lenient.stats.behind, 1);
        // A malformed or forged token reads the primary; it is never an error.
        for (const bogus of ['nonsense', '1.zz', '2.10', '1.ffffffffffffffff']) {
          const r = await lenient.read(bogus, (k) => k('groups').where({ uid }).first());
          t.is(r.description, 'after', bogus);
        }
        t.is(lenient.stats.replica, 1);
      } finally {
        await lenient.close();
      }
      const bogus = await s.admin.raw(`${G}/${uid}`, { headers: { [HEADER]: 'not-a-token' } });
      t.is(bogus.status, 200);
      t.is(bogus.body.description, 'after');
    } finally {
      await resumeReplay();
    }
    // Resumed, the replica catches up and is used again.
    const w2 = await s.admin.patch(`${G}/${uid}`, { description: 'resumed' });
    const token2 = w2.headers.get(HEADER)!;
    while ((await onStandby(uid)) !== 'resumed') await new Promise((r) => setTimeout(r, 10));
    const s4 = stats();
    const r = await s.admin.raw(`${G}/${uid}`, { headers: { [HEADER]: token2 } });
    t.is(r.body.description, 'resumed');
    t.is(stats().replica, s4.replica + 1);
  },
);

run(
  'authorization is never read from a replica: a revoked binding stops granting with the replica paused',
  async (t) => {
    const folder = await createGroup(s.admin, 'authz-folder', org);
    const who = await createIdentity(s.admin, org, 'replica-reader');
    const role = await createRole(s.admin, org, 'replica-reader-role', ['groups.list']);
    const binding = await createBinding(s.admin, folder, who, role);
    const token = (await s.arbor.tokens.sign(who, { iss: ISSUER, sub: 'sub-replica-reader' }))
      .token;
    const reader = s.client(token);
    t.is((await reader.get(`${G}/${folder}`)).status, 200);
    while ((await standby('role_bindings').where({ uid: binding }).first()) === undefined)
      await new Promise((r) => setTimeout(r, 10));

    await pauseReplay();
    try {
      t.is((await s.admin.delete(`/iam/v2beta1/roleBindings/${binding}`)).status, 200);
      // The standby still holds the binding; grants read there would still allow the read.
      t.truthy(await standby('role_bindings').where({ uid: binding }).first());
      // Today's bound: this process forgets grants on its own writes at once; another process
      // within the one-second cache. Past that second, the answer must be a denial either way.
      const first = await reader.get(`${G}/${folder}`);
      await new Promise((r) => setTimeout(r, 1_100));
      const later = await reader.get(`${G}/${folder}`);
      t.not(first.status, 200);
      t.not(later.status, 200);
      // Lists are filtered by the same grants.
      const list = await reader.get(G);
      t.is(list.status, 200);
      t.false((list.body.groups ?? []).some((g: { uid: string }) => g.uid === folder));
    } finally {
      await resumeReplay();
    }
  },
);

/** One unary call with `metadata`; resolves to the answer and the response metadata. */
function grpcCall(
  method: 'GetGroup' | 'UpdateGroup',
  req: Record<string, unknown>,
  metadata: Record<string, string>,
): Promise<{ json: any; headers: grpc.Metadata }> {
  const m = GroupsService.method[method === 'GetGroup' ? 'getGroup' : 'updateGroup'];
  const client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${ADMIN_TOKEN}`);
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return new Promise((resolve, reject) => {
    let headers = new grpc.Metadata();
    const call = client.makeUnaryRequest(
      `/${GroupsService.typeName}/${m.name}`,
      (msg: any) => Buffer.from(toBinary(m.input, msg)),
      (buf: Buffer) => fromBinary(m.output, buf),
      fromJson(m.input, req as JsonValue),
      md,
      (err, res) => {
        client.close();
        if (err) reject(err);
        else resolve({ json: toJson(m.output, res!), headers });
      },
    );
    call.on('metadata', (h) => (headers = h));
  });
}

run(
  'gRPC: a write answers the token in its metadata; a Get sending it back sees the write',
  async (t) => {
    const uid = await createGroup(s.admin, 'grpc-ryw', org);
    const before = stats();
    for (let i = 0; i < 200; i++) {
      const want = `grpc-${i}`;
      const w = await grpcCall(
        'UpdateGroup',
        { group: { uid, description: want }, updateMask: 'description' },
        {},
      );
      const token = w.headers.get(HEADER)[0];
      t.is(typeof token, 'string');
      const r = await grpcCall('GetGroup', { uid }, { [HEADER]: token as string });
      if (r.json.description !== want) t.fail(`read ${i}: ${r.json.description}`);
    }
    t.true(stats().replica > before.replica);
    // Over REST, the same token is accepted: it is one contract.
    const w = await grpcCall(
      'UpdateGroup',
      { group: { uid, description: 'cross' }, updateMask: 'description' },
      {},
    );
    const r = await s.admin.raw(`${G}/${uid}`, {
      headers: { [HEADER]: w.headers.get(HEADER)[0] as string },
    });
    t.is(r.body.description, 'cross');
  },
);

run(
  'with a read cache in front of the replicas: a token read through another process sees the write',
  async (t) => {
    const cdb = await openDatabase({
      url: pair.primaryUrl,
      readUrls: [pair.standbyUrl],
      maxReplicaLagMs: MAX_LAG_MS,
      dataDir: '',
    });
    const c = await startGrpcServer({}, {}, cdb);
    try {
      const deadline = Date.now() + 10_000;
      while (!cdb.changeFeed?.fresh()) {
        if (Date.now() > deadline) throw new Error('the change feed did not come up');
        await new Promise((r) => setTimeout(r, 20));
      }
      const groups = await Promise.all(
        [0, 1, 2, 3].map((i) => createGroup(s.admin, `cached-${i}`, org)),
      );
      await pauseReplay();
      let mismatches = 0;
      try {
        // Written through s (no cache), read back through c (cache, then a paused replica).
        await Promise.all(
          groups.map(async (uid, k) => {
            for (let i = 0; i < 100; i++) {
              const want = `k${k}-v${i}`;
              const w = await s.admin.patch(`${G}/${uid}`, { description: want });
              const token = w.headers.get(HEADER)!;
              const r = await c.admin.raw(`${G}/${uid}`, { headers: { [HEADER]: token } });
              if (r.body?.description !== want) mismatches++;
            }
          }),
        );
      } finally {
        await resumeReplay();
      }
      t.is(mismatches, 0);
      // Unchanged since: served from memory, still right.
      // (Read until one is a hit: a loaded machine may hold a proof up for a moment.)
      const hits = c.arbor.readCaches.groups!.hits;
      const until = Date.now() + 5_000;
      while (c.arbor.readCaches.groups!.hits === hits && Date.now() < until)
        for (const [k, uid] of groups.entries())
          t.is((await c.admin.get(`${G}/${uid}`)).body.description, `k${k}-v99`);
      t.true(c.arbor.readCaches.groups!.hits > hits);
    } finally {
      await c.close();
      await cdb.close();
    }
  },
);

run('a replica that is gone is skipped: reads are answered by the primary', async (t) => {
  const uid = await createGroup(s.admin, 'replica-gone', org, 'there');
  await standby.destroy();
  await pair.stopStandby();
  const before = stats();
  for (let i = 0; i < 5; i++) {
    const r = await s.admin.get(`${G}/${uid}`);
    t.is(r.status, 200);
    t.is(r.body.description, 'there');
  }
  const w = await s.admin.patch(`${G}/${uid}`, { description: 'still' });
  t.is(w.status, 200);
  const r = await s.admin.raw(`${G}/${uid}`, { headers: { [HEADER]: w.headers.get(HEADER)! } });
  t.is(r.body.description, 'still');
  const after = stats();
  t.is(after.replica, before.replica);
  // The reads that tried it failed over to the primary.
  t.true(after.failed > before.failed);
});

run(
  'an access request approved: read on the replica with its token, and denied 1 ms after it ends',
  async (t) => {
    const team = await createGroup(s.admin, 'requests-team', org);
    const target = await createIdentity(s.admin, team, 'requests-target');
    const reader = await createRole(s.admin, org, 'requests-reader', [
      'groups.list',
      'identity.list',
    ]);
    const looker = await createRole(s.admin, org, 'requests-looker', ['groups.list', 'roles.list']);
    const granter = await createRole(s.admin, org, 'requests-granter', [
      'groups.list',
      'identity.list',
      'roles.list',
      'role_bindings.create',
    ]);
    const asker = await createIdentity(s.admin, org, 'requests-asker');
    const approver = await createIdentity(s.admin, org, 'requests-approver');
    await createBinding(s.admin, org, asker, looker);
    await createBinding(s.admin, org, approver, granter);
    const sign = async (uid: string) =>
      (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${uid}` })).token;
    const asking = s.client(await sign(asker));
    const approving = s.client(await sign(approver));
    const use = async () => (await asking.get(`/iam/v2beta1/identities/${target}`)).status;
    const asked = await asking.post(`/iam/v2beta1/accessRequests/${team}`, {
      roleUid: reader,
      durationSeconds: 2,
      reason: 'replica',
    });
    t.is(asked.status, 200, JSON.stringify(asked.body));
    t.is(await use(), 404);
    const approved = await approving.post('/iam/v2beta1/accessRequests:approve', {
      uid: asked.body.uid,
    });
    t.is(approved.body.state, 'APPROVED');
    const token = approved.headers.get(HEADER);
    if (!token) return t.fail('the approval answered without a consistency token');
    // Read back with the token, wherever it is served: the approval and its binding.
    const request = await s.admin.raw(`/iam/v2beta1/accessRequests/${asked.body.uid}`, {
      headers: { [HEADER]: token },
    });
    t.is(request.body.state, 'APPROVED');
    const binding = await s.admin.raw(`/iam/v2beta1/roleBindings/${approved.body.bindingUid}`, {
      headers: { [HEADER]: token },
    });
    t.is(binding.status, 200);
    const endAt = Date.parse(binding.body.expireTime);
    t.is(await use(), 200, 'granted: authorization reads the primary');
    while (Date.now() < endAt + 1) await new Promise((r) => setTimeout(r, 5));
    t.is(await use(), 404, 'denied 1 ms after it ends');
  },
);
