import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import {
  ISSUER,
  createBinding,
  createIdentity,
  createRole,
  violations,
} from '../helpers/iam-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * access:simulate with conditional role bindings, over REST: a conditional binding's delta
 * is a conditional entry (carrying the condition), never an unconditional gain; where the
 * capability is held unconditionally anyway it adds nothing; an invalid condition refuses
 * the set as the real create refuses the binding, naming the change and the position.
 */
let s: TestServer;
let org: string;
let folder: string;
let sub: string;
let alice: string;
let bob: string;
let reader: string;
const SIM = '/iam/v2beta1/access:simulate';
const HOURS = { expression: 'request.time.getHours() < 18', title: 'office hours' };

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'cond-org');
  folder = await createGroup(s.admin, 'folder', org);
  sub = await createGroup(s.admin, 'sub', folder);
  alice = await createIdentity(s.admin, org, 'alice');
  bob = await createIdentity(s.admin, folder, 'bob');
  reader = await createRole(s.admin, org, 'reader', ['groups.list', 'repo.list']);
  await createBinding(s.admin, sub, bob, reader);
});
test.after.always(async () => {
  await s?.close();
});

const bind = (groupUid: string, identityUid: string, condition?: object) => ({
  createRoleBinding: {
    groupUid,
    identityUid,
    roleUid: reader,
    ...(condition ? { condition } : {}),
  },
});

async function conditionalBinding(c: Client, group: string, identity: string): Promise<string> {
  const res = await c.post(`/iam/v2beta1/roleBindings/${group}`, {
    identityUid: identity,
    roleUid: reader,
    condition: HOURS,
  });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return (res.body as { uid: string }).uid;
}

test('a conditional binding gains only when its condition holds, and says which', async (t) => {
  const res = await s.admin.post(SIM, { changes: [bind(folder, alice, HOURS)], explain: true });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.changes, [{ index: 0, applied: true, permitted: true }]);
  t.is(res.body.totalCount, '1');
  t.deepEqual(res.body.deltas, [
    {
      identity: { uid: alice, name: 'alice', path: 'cond-org/alice' },
      group: { uid: folder, name: 'folder', path: 'cond-org/folder' },
      effect: 'GAIN',
      capabilities: ['groups.list', 'repo.list'],
      before: [],
      after: [
        {
          changeIndex: 0,
          role: { uid: reader, name: 'reader', description: '' },
          groupUid: folder,
          path: [folder],
          capabilities: ['groups.list', 'repo.list'],
          condition: HOURS,
        },
      ],
      unchangedBelow: [],
      condition: HOURS,
    },
  ]);
  t.deepEqual(res.body.delegationDeltas, []);
});

test('where the capability is held unconditionally, a conditional grant is a hole', async (t) => {
  // bob reads the sub-folder unconditionally: at the folder he gains "when", not below sub.
  const res = await s.admin.post(SIM, { changes: [bind(folder, bob, HOURS)] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.deltas.length, 1);
  t.like(res.body.deltas[0], { effect: 'GAIN', group: { uid: folder }, condition: HOURS });
  t.deepEqual(res.body.deltas[0].unchangedBelow, [
    { groupUid: sub, capabilities: ['groups.list', 'repo.list'] },
  ]);
  // And a conditional binding where an unconditional one grants after adds nothing.
  const there = await s.admin.post(SIM, {
    changes: [
      { createRoleBinding: { groupUid: org, identityUid: bob, roleUid: reader } },
      bind(folder, bob, HOURS),
      bind(sub, alice, HOURS),
    ],
  });
  t.is(there.status, 200, JSON.stringify(there.body));
  t.deepEqual(
    there.body.changes.map((v: any) => v.applied),
    [true, true, true],
  );
  t.deepEqual(
    there.body.deltas
      .map(
        (d: any) => `${d.identity.name} ${d.effect} ${d.group.name} ${d.condition?.title ?? '-'}`,
      )
      .sort(),
    ['alice GAIN sub office hours', 'bob GAIN cond-org -'],
  );
});

test.serial(
  'deleting a conditional binding loses conditionally; both kinds side by side',
  async (t) => {
    const b = await conditionalBinding(s.admin, folder, alice);
    try {
      const res = await s.admin.post(SIM, {
        changes: [
          { deleteRoleBinding: { uid: b } },
          { createRoleBinding: { groupUid: folder, identityUid: alice, roleUid: reader } },
        ],
      });
      t.is(res.status, 200, JSON.stringify(res.body));
      // The unconditional gain, then the conditional loss is no loss at all: held after anyway.
      t.deepEqual(
        res.body.deltas.map((d: any) => [d.effect, d.group.uid, d.condition ?? null]),
        [['GAIN', folder, null]],
      );
      const lost = await s.admin.post(SIM, { changes: [{ deleteRoleBinding: { uid: b } }] });
      t.deepEqual(
        lost.body.deltas.map((d: any) => [d.effect, d.group.uid, d.condition ?? null]),
        [['LOSE', folder, HOURS]],
      );
      // A role edit changes what the conditional binding grants "when", too.
      const edit = await s.admin.post(SIM, {
        changes: [{ updateRole: { uid: reader, capabilities: ['groups.list'] } }],
      });
      const mine = edit.body.deltas.filter((d: any) => d.identity.uid === alice);
      t.deepEqual(
        mine.map((d: any) => [d.effect, d.capabilities, d.condition?.title ?? null]),
        [['LOSE', ['repo.list'], 'office hours']],
      );
    } finally {
      await s.admin.delete(`/iam/v2beta1/roleBindings/${b}`);
    }
  },
);

test('an invalid condition refuses the set as create would, naming the change and position', async (t) => {
  const bad = { expression: 'nope == 1' };
  const real = await s.admin.post(`/iam/v2beta1/roleBindings/${folder}`, {
    identityUid: alice,
    roleUid: reader,
    condition: bad,
  });
  t.is(real.status, 400);
  const [createSays] = violations(real.body);
  t.regex(createSays!, /^condition\.expression: .*nope.* at position 0$/);
  const res = await s.admin.post(SIM, {
    changes: [bind(folder, bob), bind(folder, alice, bad)],
  });
  t.is(res.status, 400, JSON.stringify(res.body));
  t.is(res.body.code, 3); // INVALID_ARGUMENT
  t.deepEqual(violations(res.body), [`changes.1.createRoleBinding.${createSays}`]);
  // Bounded as create bounds it, before it is compiled.
  const long = await s.admin.post(SIM, {
    changes: [bind(folder, alice, { expression: 'true || '.repeat(200) + 'true' })],
  });
  t.is(long.status, 400);
  t.deepEqual(violations(long.body), [
    'changes.0.createRoleBinding.condition.expression: must be at most 1000 characters',
  ]);
});

test('a caller sees a conditional delta only through bindings it may list', async (t) => {
  // An identity that may list groups and identities but no binding: it learns nothing of
  // alice's conditional binding being removed.
  const looker = await createIdentity(s.admin, org, 'looker');
  const role = await createRole(s.admin, org, 'looker', ['groups.list', 'identity.list']);
  await createBinding(s.admin, org, looker, role);
  const b = await conditionalBinding(s.admin, sub, alice);
  try {
    const token = await s.arbor.tokens.sign(looker, { iss: ISSUER, sub: 'sub-looker' });
    const res = await s.client(token.token).post(SIM, {
      changes: [{ deleteRoleBinding: { uid: b } }],
    });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.deepEqual(res.body.changes, [
      { index: 0, applied: false, permitted: false, reason: 'role binding not found' },
    ]);
    t.deepEqual(res.body.deltas, []);
    t.is(res.body.totalCount, '0');
  } finally {
    await s.admin.delete(`/iam/v2beta1/roleBindings/${b}`);
  }
});
