import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';

// A check on a binding that has not started is denied, as the authorizer decides; its
// answer says which scheduled bindings would grant and from when (`pending`), so a person
// reads "starts in 2 h", not "nothing grants it". Only bindings the caller may list show.
let s: GrpcTestServer;
let org: string;
let team: string;
let sam: string;
let scheduled: string;
let later: string;
let start: number;
let end: number;
const A = '/iam/v2beta1/access';
const B = '/iam/v2beta1/roleBindings';
const iso = (ms: number) => new Date(ms).toISOString();

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'acme');
  team = await createGroup(s.admin, 'team', org);
  sam = await createIdentity(s.admin, org, 'sam');
  const deleter = await createRole(s.admin, org, 'deleter', ['groups.list', 'groups.delete']);
  const viewer = await builtinRoleUid(s.admin, 'viewer');
  // Live, but grants no delete: the reason a denial names (`nearest`).
  await createBinding(s.admin, org, sam, viewer);
  start = Date.now() + 2 * 3_600_000;
  end = start + 8 * 3_600_000;
  const make = async (group: string, role: string, notBefore: number, expireTime?: number) => {
    const res = await s.admin.post(`${B}/${group}`, {
      identityUid: sam,
      roleUid: role,
      notBefore: iso(notBefore),
      ...(expireTime === undefined ? {} : { expireTime: iso(expireTime) }),
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.uid as string;
  };
  // Two scheduled grants of delete: the later one listed second (soonest first), and one
  // scheduled binding that would not grant delete (left out).
  later = await make(org, deleter, start + 86_400_000);
  scheduled = await make(team, deleter, start, end);
  await make(team, viewer, start);
});
test.after.always(async () => {
  await s?.close();
});

const askDelete = { identityUid: '', capability: 'groups.delete', groupUid: '' };

test('check: a denial names the scheduled bindings that would grant, soonest first', async (t) => {
  const res = await s.admin.post(`${A}:check`, { ...askDelete, identityUid: sam, groupUid: team });
  t.is(res.status, 200);
  t.false(res.body.allowed);
  t.deepEqual(res.body.grants, []);
  t.deepEqual(
    res.body.nearest.map((h: { role: { name: string } }) => h.role.name),
    ['viewer'],
    'a scheduled binding is not a live reason',
  );
  t.deepEqual(
    res.body.pending.map((p: { bindingUid: string }) => p.bindingUid),
    [scheduled, later],
  );
  t.like(res.body.pending[0], {
    groupUid: team,
    role: { name: 'deleter' },
    path: [team],
    notBefore: iso(start),
    expireTime: iso(end),
  });
  t.like(res.body.pending[1], {
    groupUid: org,
    path: [org, team],
    notBefore: iso(start + 86_400_000),
  });
  t.false('expireTime' in res.body.pending[1]);
});

test('check: no pending field where no scheduled binding would grant', async (t) => {
  const res = await s.admin.post(`${A}:check`, {
    identityUid: sam,
    capability: 'groups.update',
    groupUid: team,
  });
  t.false(res.body.allowed);
  t.false('pending' in res.body);
});

test('check: the identity asking about itself sees its own scheduled bindings', async (t) => {
  const token = (await s.arbor.tokens.sign(sam, { iss: ISSUER, sub: 'sub-sam' })).token;
  const self = s.client(token);
  // Twice: the second may be answered from the remembered self checks.
  for (const round of [1, 2]) {
    const res = await self.post(`${A}:check`, { capability: 'groups.delete', groupUid: team });
    t.is(res.status, 200);
    t.false(res.body.allowed, `round ${round}`);
    t.is(res.body.pending?.length, 2, `round ${round}`);
  }
  const batch = await self.post(`${A}:batchCheck`, {
    checks: [{ capability: 'groups.delete', groupUid: team }],
  });
  t.is(batch.body.results[0].pending[0].bindingUid, scheduled);
});

test('check: a caller who may not list the scheduled binding is not told of it', async (t) => {
  // Lists groups and identities in the organization, and bindings only at the team: the
  // binding at the organization is not its to see.
  const peeker = await createIdentity(s.admin, org, 'peeker');
  const groupsAndIds = await createRole(s.admin, org, 'groups-ids', [
    'groups.list',
    'identity.list',
  ]);
  const bindings = await createRole(s.admin, org, 'bindings', ['role_bindings.list']);
  await createBinding(s.admin, org, peeker, groupsAndIds);
  await createBinding(s.admin, team, peeker, bindings);
  const token = (await s.arbor.tokens.sign(peeker, { iss: ISSUER, sub: 'sub-peeker' })).token;
  const res = await s.client(token).post(`${A}:check`, {
    ...askDelete,
    identityUid: sam,
    groupUid: team,
  });
  t.is(res.status, 200);
  t.deepEqual(
    res.body.pending.map((p: { bindingUid: string }) => p.bindingUid),
    [scheduled],
  );
});

test('grpc: the same pending bindings, with their start as a Timestamp', async (t) => {
  const check = await s.grpcAdmin.call(AccessService, 'CheckAccess', {
    identityUid: sam,
    capability: 'groups.delete',
    groupUid: team,
  });
  t.true(check.ok);
  const json = (check.ok ? check.json : {}) as {
    pending?: { bindingUid: string; notBefore: string }[];
  };
  t.deepEqual(
    json.pending?.map((p) => p.bindingUid),
    [scheduled, later],
  );
  t.is(new Date(json.pending![0]!.notBefore).getTime(), start);
});
