import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { builtinRole } from '../helpers/authority.js';
import { createGroup } from '../helpers/fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import {
  ISSUER,
  createBinding,
  createIdentity,
  createRole,
  fields,
} from '../helpers/iam-fixtures.js';
import type { Client } from '../helpers/server.js';

/**
 * Unused-access findings: GET /iam/v2beta1/access:unused. Times are set
 * in the database directly (a binding made 200 days ago, used 60 days ago), since a test
 * cannot wait for a window of days.
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let other: string;
/** Bound in the folder: old and never used. */
let idle: string;
let idleBinding: string;
/** idle's binding at the org, which the auditor may not list. */
let hiddenBinding: string;
/** Bound in the folder, used 60 days ago. */
let stale: string;
let staleBinding: string;
/** Bound in the folder, used just now. */
let busy: string;
let busyBinding: string;
/** Old and unused, in another org. */
let elsewhere: string;
let auditor: Client;
let auditorToken: string;
const U = '/iam/v2beta1/access:unused';
const DAY = 24 * 3600 * 1000;

const daysAgo = (n: number) => new Date(Date.now() - n * DAY);

async function backdate(table: 'role_bindings' | 'identities', uid: string, days: number) {
  const at = daysAgo(days);
  await s.db
    .knex(table)
    .where('uid', uid)
    .update(table === 'identities' ? { created_at: at, last_seen_at: at } : { created_at: at });
}

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'unused-org');
  folder = await createGroup(s.admin, 'unused-folder', org);
  other = await createGroup(s.admin, 'unused-other');
  const viewer = await builtinRole(s.admin, 'viewer');
  idle = await createIdentity(s.admin, folder, 'idle');
  stale = await createIdentity(s.admin, folder, 'stale');
  busy = await createIdentity(s.admin, folder, 'busy');
  elsewhere = await createIdentity(s.admin, other, 'elsewhere');
  idleBinding = await createBinding(s.admin, folder, idle, viewer);
  hiddenBinding = await createBinding(s.admin, org, idle, viewer);
  staleBinding = await createBinding(s.admin, folder, stale, viewer);
  busyBinding = await createBinding(s.admin, folder, busy, viewer);
  const elsewhereBinding = await createBinding(s.admin, other, elsewhere, viewer);
  const auditorRole = await createRole(s.admin, org, 'unused-auditor', [
    'groups.list',
    'identity.list',
    'role_bindings.list',
  ]);
  const auditorId = await createIdentity(s.admin, folder, 'auditor');
  await createBinding(s.admin, folder, auditorId, auditorRole);
  for (const b of [idleBinding, hiddenBinding, staleBinding, busyBinding, elsewhereBinding])
    await backdate('role_bindings', b, 200);
  for (const i of [idle, stale, busy, elsewhere]) await backdate('identities', i, 200);
  await s.db.knex('binding_usage').insert({ binding_uid: staleBinding, last_used_at: daysAgo(60) });
  await s.db
    .knex('identities')
    .where('uid', stale)
    .update({ last_seen_at: daysAgo(60) });
  // busy authenticates and lists groups now: its binding and itself are in use.
  const busyToken = (await s.arbor.tokens.sign(busy, { iss: ISSUER, sub: 'sub-busy' })).token;
  t_ok((await s.client(busyToken).get(`/iam/v2beta1/groups/${folder}`)).status);
  await s.arbor.usage!.flusher.flush();
  auditorToken = (await s.arbor.tokens.sign(auditorId, { iss: ISSUER, sub: 'sub-a' })).token;
  auditor = s.client(auditorToken);
});
test.after.always(async () => {
  await s?.close();
});

function t_ok(status: number): void {
  if (status !== 200) throw new Error(`set-up request answered ${status}`);
}

const uidsOf = (body: { findings: Array<{ uid: string }> }) =>
  body.findings.map((f) => f.uid).sort();

test('the admin sees every binding and identity unused for the window, never-used from createTime', async (t) => {
  const res = await s.admin.get(`${U}?window=30d&group=${org}`);
  t.is(res.status, 200);
  t.deepEqual(uidsOf(res.body), [idle, idleBinding, hiddenBinding, stale, staleBinding].sort());
  t.is(res.body.totalCount, '5');
  const byUid = new Map(res.body.findings.map((f: any) => [f.uid, f]));
  const sb: any = byUid.get(staleBinding);
  t.like(sb, {
    kind: 'roleBinding',
    identityUid: stale,
    groupUid: folder,
    expireBindings: [staleBinding],
  });
  t.true(Math.abs(Date.parse(sb.lastUsedTime) - daysAgo(60).getTime()) < DAY);
  const ib: any = byUid.get(idleBinding);
  t.is(ib.lastUsedTime, undefined, 'never used');
  const ii: any = byUid.get(idle);
  t.like(ii, { kind: 'identity', identityUid: idle });
  t.is(ii.lastUsedTime, undefined);
  t.deepEqual([...ii.expireBindings].sort(), [idleBinding, hiddenBinding].sort());
  // A wider window: used 60 days ago is not unused for 90 days.
  const ninety = await s.admin.get(`${U}?group=${org}`);
  t.deepEqual(uidsOf(ninety.body), [idle, idleBinding, hiddenBinding].sort());
  // Without a group: the other org's too.
  const all = await s.admin.get(`${U}?window=30d`);
  t.true(uidsOf(all.body).includes(elsewhere));
  t.false(uidsOf(all.body).includes(busy) || uidsOf(all.body).includes(busyBinding));
});

test('a caller sees only what it may list: no hidden binding, not even in a remedy', async (t) => {
  const res = await auditor.get(`${U}?window=30d`);
  t.is(res.status, 200);
  t.deepEqual(uidsOf(res.body), [idle, idleBinding, stale, staleBinding].sort());
  t.is(res.body.totalCount, '4');
  const ii = res.body.findings.find((f: any) => f.uid === idle);
  t.deepEqual(ii.expireBindings, [idleBinding], 'the org binding stays hidden');
  t.false(JSON.stringify(res.body).includes(hiddenBinding));
  // A group it cannot list is NOT_FOUND, as its Get is.
  t.is((await auditor.get(`${U}?group=${other}`)).status, 404);
  t.is((await auditor.get(`${U}?group=${org}`)).status, 404);
  t.is((await s.client().get(U)).status, 401);
});

test('pages carry the total and a page token, like every List', async (t) => {
  const seen: string[] = [];
  let token: string | undefined;
  for (let i = 0; i < 10; i++) {
    const res = await s.admin.get(
      `${U}?window=30d&group=${org}&pageSize=2${token ? `&pageToken=${token}` : ''}`,
    );
    t.is(res.status, 200);
    t.is(res.body.totalCount, '5');
    seen.push(...res.body.findings.map((f: any) => f.uid));
    token = res.body.nextPageToken;
    if (!token) break;
  }
  t.deepEqual(seen, [idle, idleBinding, hiddenBinding, stale, staleBinding].sort());
  const kinds = await s.admin.get(`${U}?window=30d&group=${org}&kind=identity`);
  t.deepEqual(uidsOf(kinds.body), [idle, stale].sort());
});

test('a window is 1 to 365 days; a kind is roleBinding or identity', async (t) => {
  for (const w of ['0d', '366d', 'abc', '1w', '-1d']) {
    const res = await s.admin.get(`${U}?window=${w}`);
    t.is(res.status, 400, w);
    t.deepEqual(fields(res.body), ['window'], w);
  }
  t.is((await s.admin.get(`${U}?window=365d`)).status, 200);
  t.is((await s.admin.get(`${U}?window=1`)).status, 200);
  t.deepEqual(fields((await s.admin.get(`${U}?kind=role`)).body), ['kind']);
});

test('gRPC answers what REST answers', async (t) => {
  const r = await s.grpcAdmin.call(AccessService, 'UnusedAccess', { window: '30d', group: org });
  t.true(r.ok);
  const restAdmin = await s.admin.get(`${U}?window=30d&group=${org}`);
  t.deepEqual(
    r.ok && r.json.findings.map((f: any) => f.uid),
    restAdmin.body.findings.map((f: any) => f.uid),
  );
  t.is(r.ok && r.json.totalCount, restAdmin.body.totalCount);
});

test.serial('the remedy: expireTime set through the binding update path, audited', async (t) => {
  const at = new Date(Date.now() + 30 * DAY);
  const res = await s.admin.patch(
    `/iam/v2beta1/roleBindings/${staleBinding}?updateMask=expireTime`,
    {
      expireTime: at.toISOString(),
    },
  );
  t.is(res.status, 200);
  const after = await s.admin.get(`${U}?window=30d&group=${org}`);
  const f = after.body.findings.find((x: any) => x.uid === staleBinding);
  t.is(Date.parse(f.expireTime), at.getTime(), 'still unused, now expiring');
  // Only forward: a later expiry would extend access.
  const later = await s.admin.patch(
    `/iam/v2beta1/roleBindings/${staleBinding}?updateMask=expireTime`,
    { expireTime: new Date(at.getTime() + DAY).toISOString() },
  );
  t.is(later.status, 400);
  t.deepEqual(fields(later.body), ['expireTime']);
  // A mask without a body value leaves it as it is (never removed).
  const reset = await s.admin.patch(
    `/iam/v2beta1/roleBindings/${staleBinding}?updateMask=expireTime`,
    {},
  );
  t.is(reset.status, 200);
  t.is(Date.parse(reset.body.expireTime), at.getTime());
  const audit = await s.admin.get(
    `/audit/v2beta1/events?resource_uid=${encodeURIComponent(staleBinding)}&page_size=200`,
  );
  t.true(
    audit.body.events.some((e: any) => e.operation === 'update'),
    'the update is audited',
  );
});

test('a scheduled binding is unused only from its start: not started, or started within the window, is no finding', async (t) => {
  const sched = await createGroup(s.admin, 'unused-scheduled');
  const who = await createIdentity(s.admin, sched, 'scheduled');
  // One role each: the same identity and role cannot be bound twice at a group.
  const bind = async (role: string, notBefore?: Date) => {
    const res = await s.admin.post(`/iam/v2beta1/roleBindings/${sched}`, {
      identityUid: who,
      roleUid: await builtinRole(s.admin, role),
      ...(notBefore ? { notBefore: notBefore.toISOString() } : {}),
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.uid as string;
  };
  const startedLongAgo = await bind('viewer', daysAgo(100));
  const startedLately = await bind('editor', daysAgo(10));
  const pending = await bind('registry.pull', new Date(Date.now() + 20 * DAY));
  const plain = await bind('registry.push');
  // All made 200 days ago (as the others in this file, set in the database).
  for (const b of [startedLongAgo, startedLately, pending, plain])
    await backdate('role_bindings', b, 200);
  await backdate('identities', who, 200);

  const thirty = await s.admin.get(`${U}?window=30d&group=${sched}`);
  t.is(thirty.status, 200);
  t.deepEqual(uidsOf(thirty.body), [who, startedLongAgo, plain].sort());
  const f = thirty.body.findings.find((x: any) => x.uid === startedLongAgo);
  t.true(Math.abs(Date.parse(f.notBefore) - daysAgo(100).getTime()) < 60_000);
  t.is(f.lastUsedTime, undefined);
  t.is(thirty.body.findings.find((x: any) => x.uid === plain).notBefore, undefined);
  // The identity's remedy expires what has started: a scheduled binding's expiry could not
  // come before its start.
  const id = thirty.body.findings.find((x: any) => x.uid === who);
  t.deepEqual([...id.expireBindings].sort(), [startedLongAgo, startedLately, plain].sort());
  // A window shorter than the time since it started: the lately started one is a finding.
  const five = await s.admin.get(`${U}?window=5d&group=${sched}&kind=roleBinding`);
  t.deepEqual(uidsOf(five.body), [startedLongAgo, startedLately, plain].sort());
  // Used since it started: no finding, whatever its start.
  await s.db.knex('binding_usage').insert({ binding_uid: startedLately, last_used_at: daysAgo(1) });
  const used = await s.admin.get(`${U}?window=5d&group=${sched}&kind=roleBinding`);
  t.deepEqual(uidsOf(used.body), [startedLongAgo, plain].sort());
  // gRPC carries notBefore too.
  const r = await s.grpcAdmin.call(AccessService, 'UnusedAccess', { window: '30d', group: sched });
  t.true(r.ok);
  const g = r.ok && r.json.findings.find((x: any) => x.uid === startedLongAgo);
  t.is(Date.parse(g.notBefore), Date.parse(f.notBefore));
});

test.serial('checks about a holder are no use of its binding: the finding stays', async (t) => {
  // The auditor may list idle and its folder binding, and asks about it every way there is.
  const check = { identityUid: idle, capability: 'groups.list', groupUid: folder };
  const one = await auditor.post('/iam/v2beta1/access:check', check);
  t.is(one.status, 200);
  t.true(one.body.allowed);
  t.deepEqual(
    one.body.grants.map((g: any) => g.bindingUid),
    [idleBinding],
    'the binding is the proof',
  );
  const batch = await auditor.post('/iam/v2beta1/access:batchCheck', { checks: [check, check] });
  t.is(batch.status, 200);
  const grpc = s.grpc(auditorToken);
  t.true((await grpc.call(AccessService, 'CheckAccess', check)).ok);
  const who = await auditor.get(
    `/iam/v2beta1/access:whoCan?group=${folder}&capability=groups.list`,
  );
  t.true(who.body.identities.some((h: any) => h.identityUid === idle));
  t.is((await auditor.get(`/iam/v2beta1/access:whatCan?identity=${idle}`)).status, 200);
  await s.arbor.usage!.flusher.flush();
  const row = await s.db.knex('binding_usage').where('binding_uid', idleBinding).first();
  t.is(row, undefined, 'not marked used');
  const res = await s.admin.get(`${U}?window=30d&group=${org}`);
  t.true(uidsOf(res.body).includes(idleBinding), 'still a finding');
});
