import test from 'ava';
import { INSTANT_RANGE_PROBLEM } from '../../src/core/instant.js';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/**
 * access:simulate and scheduled grants (`notBefore`): a created binding grants
 * from its notBefore until its expireTime, as every live binding does; an existing one that
 * has not started grants nothing yet; a malformed or empty window is INVALID_ARGUMENT on the
 * change's notBefore, over REST and gRPC alike. The property test
 * (access-simulate.property.test.ts) covers the same against the model.
 */
let s: GrpcTestServer;
let org: string;
let sub: string;
let other: string;
let alice: string;
let bob: string;
let carol: string;
let reader: string;
const SIM = '/iam/v2beta1/access:simulate';
const viewer = builtinRoleUid('viewer');

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'sim-nb-org');
  const folder = await createGroup(s.admin, 'folder', org);
  sub = await createGroup(s.admin, 'sub', folder);
  other = await createGroup(s.admin, 'other', org);
  alice = await createIdentity(s.admin, org, 'alice');
  bob = await createIdentity(s.admin, folder, 'bob');
  carol = await createIdentity(s.admin, org, 'carol');
  reader = await createRole(s.admin, org, 'reader', ['groups.list', 'repo.list']);
});
test.after.always(async () => {
  await s?.close();
});

test('a scheduled binding (notBefore) grants only once started, as live bindings do; REST and gRPC', async (t) => {
  const started = new Date(Date.now() - 60_000).toISOString();
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const body = {
    changes: [
      // Starts in an hour: nothing changes now, and creating it is permitted.
      {
        createRoleBinding: {
          groupUid: other,
          identityUid: carol,
          roleUid: reader,
          notBefore: later,
        },
      },
      // Started a minute ago (a past notBefore grants at once, as the real create has it).
      {
        createRoleBinding: {
          groupUid: other,
          identityUid: bob,
          roleUid: reader,
          notBefore: started,
          expireTime: later,
        },
      },
    ],
    explain: true,
  };
  const res = await s.admin.post(SIM, body);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(
    res.body.changes.map((c: any) => [c.applied, c.permitted]),
    [
      [true, true],
      [true, true],
    ],
  );
  t.false(
    res.body.deltas.some((d: any) => d.identity.uid === carol),
    'not started: no gain now',
  );
  const bobs = res.body.deltas.filter((d: any) => d.identity.uid === bob);
  t.deepEqual(
    bobs.map((d: any) => `${d.effect} ${d.capabilities.join()}`),
    ['GAIN groups.list,repo.list'],
  );
  t.like(bobs[0].after[0], { changeIndex: 1, notBefore: started, expireTime: later });

  const grpc = await s.grpcAdmin.call(AccessService, 'SimulateAccess', body);
  t.true(grpc.ok);
  const gb = grpc.ok && grpc.json.deltas.filter((d: any) => d.identity.uid === bob);
  t.is(Date.parse(gb[0].after[0].notBefore), Date.parse(started));
  t.is(grpc.ok && grpc.json.totalCount, res.body.totalCount);
});

test.serial(
  'an existing binding that has not started loses nothing when deleted; a started one does',
  async (t) => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const made = await s.admin.post(`/iam/v2beta1/roleBindings/${other}`, {
      identityUid: alice,
      roleUid: reader,
      notBefore: at,
    });
    t.is(made.status, 200, JSON.stringify(made.body));
    const res = await s.admin.post(SIM, {
      changes: [{ deleteRoleBinding: { uid: made.body.uid } }],
    });
    t.is(res.status, 200);
    t.deepEqual(res.body.deltas, [], 'it grants nothing yet, so deleting it changes nothing now');
    t.is((await s.admin.delete(`/iam/v2beta1/roleBindings/${made.body.uid}`)).status, 200);
  },
);

test('notBefore: malformed, or not before expireTime, is INVALID_ARGUMENT on that field (REST and gRPC)', async (t) => {
  const change = (extra: object) => ({
    changes: [
      { deleteGroup: { uid: sub } },
      { createRoleBinding: { groupUid: org, identityUid: carol, roleUid: viewer, ...extra } },
    ],
  });
  const cases: Array<[object, string]> = [
    [{ notBefore: 'tomorrow' }, INSTANT_RANGE_PROBLEM],
    [{ notBefore: '2026-02-30T00:00:00Z' }, INSTANT_RANGE_PROBLEM],
    [{ notBefore: '0000-01-01T00:00:00Z' }, INSTANT_RANGE_PROBLEM],
    [
      { notBefore: '2030-01-01T00:00:00Z', expireTime: '2030-01-01T00:00:00Z' },
      'notBefore must be before expireTime',
    ],
    [
      { notBefore: '9999-12-31T23:59:59Z', expireTime: '2030-01-01T00:00:00Z' },
      'notBefore must be before expireTime',
    ],
  ];
  for (const [extra, why] of cases) {
    const res = await s.admin.post(SIM, change(extra));
    t.is(res.status, 400, JSON.stringify(extra));
    const bad = res.body.details.find((d: any) => d['@type'].endsWith('BadRequest'));
    t.deepEqual(bad.fieldViolations, [
      { field: 'changes.1.createRoleBinding.notBefore', description: why },
    ]);
  }
  // Not a string at all: refused too (the union of change kinds names the change).
  const number = await s.admin.post(SIM, change({ notBefore: 1767225600 }));
  t.is(number.status, 400);
  t.regex(number.body.message, /^Invalid argument: changes\.1/);
  // The far ends of time are times: the distant past grants at once, the far future never.
  const far = await s.admin.post(SIM, change({ notBefore: '0001-01-01T00:00:00Z' }));
  t.is(far.status, 200);
  t.true(far.body.deltas.some((d: any) => d.identity.uid === carol && d.effect === 'GAIN'));
  const never = await s.admin.post(SIM, change({ notBefore: '9999-12-31T23:59:59Z' }));
  t.is(never.status, 200);
  t.false(never.body.deltas.some((d: any) => d.identity.uid === carol && d.effect === 'GAIN'));
  const g = await s.grpcAdmin.call(
    AccessService,
    'SimulateAccess',
    change({ notBefore: '2030-01-01T00:00:00Z', expireTime: '2029-01-01T00:00:00Z' }),
  );
  t.false(g.ok);
  t.is(!g.ok && g.code, 3);
  t.regex(!g.ok ? g.message : '', /notBefore must be before expireTime/);
});
