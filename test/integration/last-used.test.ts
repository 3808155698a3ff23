import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { TOKEN_USE } from '../../src/auth/token-issuer.js';
import { KnexUsageStore } from '../../src/db/stores/usage-store.js';
import type { Tx } from '../../src/resources/tx.js';
import { builtinRole } from '../helpers/authority.js';
import { basic } from '../helpers/registry-fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';

/**
 * Last used: every door records the bindings that grant a decision and
 * the identity that authenticated, in memory; the flush writes them. Each door below gets
 * an identity and a binding of its own, so a door that forgot to record leaves its own
 * binding unwritten.
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let viewer: string;
const ids: Record<string, string> = {};
const bindings: Record<string, string> = {};
const DOORS = [
  'memory',
  'restFast',
  'restKoa',
  'grpcFast',
  'grpcConnect',
  'check',
  'unusedRole',
  'registry',
] as const;
const SERVICE = 'registry.last-used.test';

const tokenFor = async (uid: string) =>
  (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${uid}` })).token;

async function lastUsed(binding: string): Promise<number | undefined> {
  const rows = (await s.db
    .knex('binding_usage')
    .where('binding_uid', binding)
    .select('last_used_at')) as Array<{ last_used_at: Date }>;
  return rows[0]?.last_used_at.getTime();
}

async function lastSeen(identity: string): Promise<number> {
  const [row] = (await s.db.knex('identities').where('uid', identity).select('last_seen_at')) as [
    { last_seen_at: Date },
  ];
  return row.last_seen_at.getTime();
}

test.before(async () => {
  s = await startGrpcServer({ ARBOR_REGISTRY_SERVICE: SERVICE });
  org = await createGroup(s.admin, 'used-org');
  folder = await createGroup(s.admin, 'used-folder', org);
  // A built-in role: only answers naming built-in roles are kept by the self-check cache.
  viewer = await builtinRole(s.admin, 'viewer');
  for (const d of DOORS) {
    ids[d] = await createIdentity(s.admin, folder, d.toLowerCase());
    bindings[d] = await createBinding(s.admin, folder, ids[d]!, viewer);
  }
});
test.after.always(async () => {
  await s?.close();
});

test.serial('a decision records only in memory: nothing is written until the flush', async (t) => {
  const u = s.arbor.usage!;
  await u.flusher.flush();
  const api = s.client(await tokenFor(ids.memory!));
  t.is((await api.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
  t.true(u.recorder.pending, 'recorded in memory');
  t.is(await lastUsed(bindings.memory!), undefined, 'not written on the request path');
  await u.flusher.flush();
  t.truthy(await lastUsed(bindings.memory!));
});

test.serial('REST (fast path and Koa) and gRPC (fast path and Connect) all record', async (t) => {
  const start = Date.now();
  const fastBefore = s.arbor.fastReads!.stats.served;
  const grpcFastBefore = s.fastPath.served;

  // REST through the fast path (an HTTP/1.1 Get), and through Koa (a write it never takes).
  const fast = s.client(await tokenFor(ids.restFast!));
  t.is((await fast.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
  t.true(s.arbor.fastReads!.stats.served > fastBefore, 'the fast path answered');
  const koa = s.client(await tokenFor(ids.restKoa!));
  // v1 is Koa's alone (the fast path serves v2 only).
  t.is((await koa.get(`/iam/v1/groups/${folder}`)).status, 200);

  // gRPC: a plain unary call takes the fast path; the Connect protocol goes through Connect.
  const fastCaller = s.grpc(await tokenFor(ids.grpcFast!));
  const got = await fastCaller.call(GroupsService, 'GetGroup', { uid: folder });
  t.true(got.ok);
  t.true(s.fastPath.served > grpcFastBefore, 'the gRPC fast path answered');
  const served = s.fastPath.served;
  const connect = createClient(
    GroupsService,
    createConnectTransport({ baseUrl: s.url, httpVersion: '1.1' }),
  );
  const headers = { authorization: `Bearer ${await tokenFor(ids.grpcConnect!)}` };
  t.is((await connect.getGroup({ uid: folder }, { headers })).uid, folder);
  t.is(s.fastPath.served, served, 'Connect answered, not the fast path');

  await s.arbor.usage!.flusher.flush();
  for (const d of ['restFast', 'restKoa', 'grpcFast', 'grpcConnect'] as const) {
    const at = await lastUsed(bindings[d]!);
    t.truthy(at, `${d} recorded its binding`);
    t.true(at! >= start - 1_000, `${d}: recent`);
    t.true((await lastSeen(ids[d]!)) >= start - 1_000, `${d}: its identity authenticated`);
  }
  t.is(await lastUsed(bindings.unusedRole!), undefined, 'an idle binding records nothing');
});

test.serial(
  'a check is a question: the bindings it proves are no use, even asked about oneself',
  async (t) => {
    // A role that only this binding grants: what the check proves, and nothing else uses.
    const deleter = await createRole(s.admin, org, 'last-used-deleter', ['tag.delete']);
    const proven = await createBinding(s.admin, folder, ids.check!, deleter);
    const q = { capability: 'tag.delete', groupUid: folder };
    const api = s.client(await tokenFor(ids.check!));
    for (let i = 0; i < 3; i++) {
      const one = await api.post('/iam/v2beta1/access:check', q);
      t.true(one.body.allowed);
      t.deepEqual(
        one.body.grants.map((g: any) => g.bindingUid),
        [proven],
      );
    }
    const batch = await api.post('/iam/v2beta1/access:batchCheck', { checks: [q, q] });
    t.is(batch.status, 200);
    const caller = s.grpc(await tokenFor(ids.check!));
    const r = await caller.call(AccessService, 'CheckAccess', q);
    t.true(r.ok && r.json.allowed);
    await s.arbor.usage!.flusher.flush();
    t.is(await lastUsed(proven), undefined, 'proved, not used');
    // The check's own authorization is a use of the caller's binding: seeing the group.
    t.truthy(await lastUsed(bindings.check!));
  },
);

test.serial('a binding in constant use is written at most once a minute', async (t) => {
  const u = s.arbor.usage!;
  const api = s.client(await tokenFor(ids.restFast!));
  const version = async () =>
    (await s.db
      .knex('binding_usage')
      .where('binding_uid', bindings.restFast!)
      .first(s.db.knex.raw('xmin::text AS xmin'), 'last_used_at')) as
      { xmin: string; last_used_at: Date } | undefined;
  t.is((await api.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
  await u.flusher.flush();
  const first = await version();
  t.truthy(first);
  // Fifty requests of the holder's own, each flushed: within the minute, no row write.
  for (let i = 0; i < 50; i++) {
    t.is((await api.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
    await u.flusher.flush();
  }
  t.deepEqual(await version(), first, 'the same row version: not written again');
  // Another process's use half a minute later: the store leaves the row too.
  const at = first!.last_used_at.getTime();
  const batch = (ms: number) => ({
    bindings: new Map([[bindings.restFast!, at + ms]]),
    identities: new Map<string, number>(),
    resolutionMs: u.recorder.resolutionMs,
  });
  const store = new KnexUsageStore();
  const write = (ms: number) =>
    s.db.knex.transaction((tx) => store.record(tx as unknown as Tx, batch(ms)));
  await write(30_000);
  t.deepEqual(await version(), first);
  // A use a minute later moves it.
  await write(60_001);
  t.is((await version())!.last_used_at.getTime(), at + 60_001);
});

test.serial(
  'the registry token server records the identity and the binding it grants by',
  async (t) => {
    const repo = await s.admin.post(`/registry/v2beta1/repos/${folder}`, { name: 'app' });
    t.is(repo.status, 200);
    const puller = await builtinRole(s.admin, 'registry.pull');
    const pullBinding = await createBinding(s.admin, folder, ids.registry!, puller);
    // A registry-login token, as the STS issues for the registry's audience.
    const login = await s.arbor.tokens.signFor(
      TOKEN_USE.registryLogin,
      SERVICE,
      ids.registry!,
      {},
      600,
    );
    const before = await lastSeen(ids.registry!);
    await new Promise((r) => setTimeout(r, 5));
    const res = await s
      .client()
      .raw(`/auth/registry/token?service=${SERVICE}&scope=repository:${folder}/app:pull`, {
        headers: { authorization: basic('_token', login.token) },
      });
    t.is(res.status, 200);
    await s.arbor.usage!.flusher.flush();
    t.true((await lastSeen(ids.registry!)) > before, 'the identity authenticated');
    t.truthy(await lastUsed(pullBinding), 'the pull binding granted the pull');
  },
);

test.serial('a denied decision records nothing', async (t) => {
  const api = s.client(await tokenFor(ids.unusedRole!));
  // Not at org (bound at the folder below it): denied, and the binding is not used.
  t.is((await api.get(`/iam/v2beta1/groups/${org}`)).status, 404);
  await s.arbor.usage!.flusher.flush();
  t.is(await lastUsed(bindings.unusedRole!), undefined);
});
