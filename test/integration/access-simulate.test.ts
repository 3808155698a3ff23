import test from 'ava';
import { KnexUnitOfWork, kx } from '../../src/db/unit-of-work.js';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import type { Client } from '../helpers/server.js';
import { flatDeltas } from '../helpers/simulate-flat.js';

/**
 * access:simulate over REST and gRPC on a small world: the delta's shape (gain, lose,
 * holes, proofs before and after), expiry, role edits, cascading deletes, paging, the
 * verdicts, what a caller with a narrow view learns, and that nothing is written.
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let sub: string;
let other: string;
let alice: string;
let bob: string;
let hidden: string;
let carol: string;
let reader: string;
let aliceAtSub: string;
let bobAtFolder: string;
let carolClient: Client;
const SIM = '/iam/v2beta1/access:simulate';
const viewer = builtinRoleUid('viewer');

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'sim-org');
  folder = await createGroup(s.admin, 'folder', org);
  sub = await createGroup(s.admin, 'sub', folder);
  other = await createGroup(s.admin, 'other', org);
  alice = await createIdentity(s.admin, org, 'alice');
  bob = await createIdentity(s.admin, folder, 'bob');
  hidden = await createIdentity(s.admin, other, 'hidden');
  carol = await createIdentity(s.admin, org, 'carol');
  reader = await createRole(s.admin, org, 'reader', ['groups.list', 'repo.list']);
  aliceAtSub = await createBinding(s.admin, sub, alice, reader);
  bobAtFolder = await createBinding(s.admin, folder, bob, reader);
  await createBinding(s.admin, other, hidden, reader);
  // carol administers bindings in the folder, and may list identities there; nothing above.
  const admin = await createRole(s.admin, org, 'folder-binder', [
    'groups.list',
    'identity.list',
    'role_bindings.list',
    'role_bindings.create',
    'role_bindings.delete',
  ]);
  await createBinding(s.admin, folder, carol, admin);
  const token = await s.arbor.tokens.sign(carol, { iss: ISSUER, sub: 'sub-carol' });
  carolClient = s.client(token.token);
});
test.after.always(async () => {
  await s?.close();
});

test('a binding at a folder gains there, one entry with paths, the holes where it held already', async (t) => {
  const change = { createRoleBinding: { groupUid: folder, identityUid: alice, roleUid: reader } };
  const res = await s.admin.post(SIM, { changes: [change] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.changes, [{ index: 0, applied: true, permitted: true }]);
  t.is(res.body.totalCount, '1');
  t.deepEqual(res.body.deltas, [
    {
      identity: { uid: alice, name: 'alice', path: 'sim-org/alice' },
      group: { uid: folder, name: 'folder', path: 'sim-org/folder' },
      effect: 'GAIN',
      capabilities: ['groups.list', 'repo.list'],
      before: [],
      after: [],
      unchangedBelow: [{ groupUid: sub, capabilities: ['groups.list', 'repo.list'] }],
    },
  ]);
  // The proofs on request: each grant once, with the capabilities it grants there.
  const explained = await s.admin.post(SIM, { changes: [change], explain: true });
  t.deepEqual(explained.body.deltas[0].after, [
    {
      changeIndex: 0,
      role: { uid: reader, name: 'reader', description: '' },
      groupUid: folder,
      path: [folder],
      capabilities: ['groups.list', 'repo.list'],
    },
  ]);
});

test.serial(
  'removing one binding of a broad role answers one short entry, not one per capability',
  async (t) => {
    const owner = builtinRoleUid('owner');
    const binding = await createBinding(s.admin, folder, bob, owner);
    const res = await s.admin.post(SIM, { changes: [{ deleteRoleBinding: { uid: binding } }] });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.body.totalCount, '1');
    const [lost] = res.body.deltas;
    t.like(lost, {
      identity: { uid: bob, path: 'sim-org/folder/bob' },
      group: { uid: folder, path: 'sim-org/folder' },
      effect: 'LOSE',
    });
    t.true(lost.capabilities.length > 20);
    // The proof is given once for the entry, not once per capability.
    const explained = await s.admin.post(SIM, {
      changes: [{ deleteRoleBinding: { uid: binding } }],
      explain: true,
    });
    t.is(explained.body.deltas[0].before.length, 1);
    t.true(
      JSON.stringify(explained.body).length < 4_000,
      JSON.stringify(explained.body).length.toString(),
    );
    await s.admin.delete(`/iam/v2beta1/roleBindings/${binding}`);
  },
);

test('deleting a binding loses it; a role edit gains and loses by capability', async (t) => {
  const res = await s.admin.post(SIM, {
    changes: [
      { deleteRoleBinding: { uid: aliceAtSub } },
      { updateRole: { uid: reader, capabilities: ['groups.list', 'tag.list'] } },
    ],
    explain: true,
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  const seen = flatDeltas([res.body]).map(
    (d: any) =>
      `${d.identity.uid === alice ? 'alice' : d.identity.uid === bob ? 'bob' : 'hidden'} ${d.effect} ${d.capability}`,
  );
  t.deepEqual(seen.sort(), [
    'alice LOSE groups.list',
    'alice LOSE repo.list',
    'bob GAIN tag.list',
    'bob LOSE repo.list',
    'hidden GAIN tag.list',
    'hidden LOSE repo.list',
  ]);
  const lose = flatDeltas([res.body]).find(
    (d: any) => d.identity.uid === alice && d.capability === 'repo.list',
  )!;
  t.is(lose.before[0]?.bindingUid, aliceAtSub);
  t.deepEqual(lose.after, []);
});

test('an expired or expiring binding: the past grants nothing, the future does', async (t) => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const future = new Date(Date.now() + 3_600_000).toISOString();
  const res = await s.admin.post(SIM, {
    changes: [
      {
        createRoleBinding: { groupUid: org, identityUid: carol, roleUid: viewer, expireTime: past },
      },
      {
        createRoleBinding: {
          groupUid: other,
          identityUid: bob,
          roleUid: reader,
          expireTime: future,
        },
      },
    ],
    explain: true,
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.changes[0].permitted, false);
  t.regex(res.body.changes[0].reason, /future/);
  t.true(res.body.changes[0].applied);
  t.false(res.body.deltas.some((d: any) => d.identity.uid === carol));
  const bobs = res.body.deltas.filter((d: any) => d.identity.uid === bob);
  t.is(bobs.length, 1);
  t.deepEqual(bobs[0].capabilities, ['groups.list', 'repo.list']);
  t.is(bobs[0].after[0].expireTime, new Date(future).toISOString());
});

test('deleting an identity or a group (cascading) loses everything it carries', async (t) => {
  const res = await s.admin.post(SIM, {
    changes: [{ deleteGroup: { uid: folder } }],
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  const who = new Set(res.body.deltas.map((d: any) => d.identity.uid));
  // bob hangs in the folder, alice is bound below it, carol is bound at it.
  t.deepEqual([...who].sort(), [alice, bob, carol].sort());
  t.true(res.body.deltas.every((d: any) => d.effect === 'LOSE'));
  const id = await s.admin.post(SIM, { changes: [{ deleteIdentity: { uid: alice } }] });
  t.deepEqual(
    flatDeltas([id.body]).map((d: any) => `${d.capability} ${d.group.uid === sub}`),
    ['groups.list true', 'repo.list true'],
  );
  // Applied in order: a deleted identity cannot be bound afterwards.
  const then = await s.admin.post(SIM, {
    changes: [
      { deleteIdentity: { uid: alice } },
      { createRoleBinding: { groupUid: org, identityUid: alice, roleUid: viewer } },
    ],
  });
  t.deepEqual(then.body.changes[1], {
    index: 1,
    applied: false,
    permitted: false,
    reason: 'identity not found',
  });
});

test('paged with a total; a token is bound to its change set', async (t) => {
  const body = {
    changes: [carol, alice, bob].map((identityUid) => ({
      createRoleBinding: { groupUid: org, identityUid, roleUid: viewer },
    })),
  };
  const all = await s.admin.post(SIM, body);
  const total = Number(all.body.totalCount);
  t.is(total, 3);
  const seen: unknown[] = [];
  let token: string | undefined;
  do {
    const page = await s.admin.post(SIM, {
      ...body,
      pageSize: 1,
      ...(token ? { pageToken: token } : {}),
    });
    t.is(page.status, 200);
    t.is(page.body.totalCount, String(total));
    t.is(page.body.deltas.length, 1);
    seen.push(...page.body.deltas);
    token = page.body.nextPageToken;
  } while (token);
  t.deepEqual(seen, all.body.deltas);
  const first = await s.admin.post(SIM, { ...body, pageSize: 1 });
  const other = await s.admin.post(SIM, {
    changes: [{ deleteIdentity: { uid: carol } }],
    pageToken: first.body.nextPageToken,
  });
  t.is(other.status, 400);
});

test('a narrow caller sees only what its bindings show, and may still simulate', async (t) => {
  const res = await carolClient.post(SIM, {
    changes: [
      { updateRole: { uid: reader, capabilities: ['groups.list'] } },
      { createRoleBinding: { groupUid: folder, identityUid: alice, roleUid: viewer } },
      { deleteIdentity: { uid: hidden } },
      { deleteRoleBinding: { uid: `${other}/0123456789abcdef` } },
    ],
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  // The role is not hers to see: not applied. The binding at the folder is hers to make.
  t.deepEqual(res.body.changes[0], {
    index: 0,
    applied: false,
    permitted: false,
    reason: 'role not found',
  });
  // alice lives at the org, which carol cannot list, but holds a binding carol sees at a
  // group where carol binds (sub): referable by uid for a new binding, as the real create.
  // (Not permitted: viewer grants what carol does not hold there, a check on carol alone.)
  t.like(res.body.changes[1], { applied: true, permitted: false });
  t.notRegex(res.body.changes[1].reason, /not found/);
  t.true(
    res.body.deltas
      .filter((d: any) => d.identity.uid === alice)
      .every((d: any) => d.identity.name === '' && d.identity.path === ''),
    'by uid only: her name stays hidden',
  );
  // A hidden identity and a missing binding read alike.
  t.deepEqual(res.body.changes[2], {
    index: 2,
    applied: false,
    permitted: false,
    reason: 'identity not found',
  });
  t.is(res.body.changes[3].reason, 'role binding not found');
  t.false(JSON.stringify(res.body).includes(hidden));
  const bobs = await carolClient.post(SIM, {
    changes: [{ createRoleBinding: { groupUid: sub, identityUid: bob, roleUid: viewer } }],
  });
  t.is(bobs.status, 200);
  t.true(bobs.body.deltas.length > 0);
  t.true(bobs.body.deltas.every((d: any) => d.identity.uid === bob && d.identity.name === 'bob'));
  // Paths start where carol's view starts: she may not list the organization.
  t.deepEqual(
    bobs.body.deltas.map((d: any) => [d.identity.path, d.group.path]),
    [['folder/bob', 'folder/sub']],
  );
  // viewer grants more than carol holds: she may not make it, but sees what it would do.
  t.false(bobs.body.changes[0].permitted);
  t.regex(bobs.body.changes[0].reason, /does not hold/);
  // A delta of alice's own sub binding: carol may list bindings at sub, but not alice.
  const alices = await carolClient.post(SIM, {
    changes: [{ deleteRoleBinding: { uid: aliceAtSub } }],
  });
  t.true(alices.body.deltas.length > 0);
  t.true(
    alices.body.deltas.every(
      (d: any) => d.identity.uid === alice && d.identity.name === '' && d.identity.path === '',
    ),
  );
  t.false(JSON.stringify(alices.body).includes('sim-org'));
});

test('nothing is written: no row, no audit record, no event', async (t) => {
  const count = async () => {
    const n = async (table: string) => Number((await s.db.knex(table).count({ n: '*' }))[0]!.n);
    return [
      await n('role_bindings'),
      await n('roles'),
      await n('identities'),
      await n('groups'),
      await n('audit_events'),
      await n('event_outbox'),
    ];
  };
  const before = await count();
  const res = await s.admin.post(SIM, {
    changes: [
      { createRoleBinding: { groupUid: org, identityUid: bob, roleUid: viewer } },
      { deleteRoleBinding: { uid: bobAtFolder } },
      { updateRole: { uid: reader, capabilities: ['tag.list'] } },
      { deleteIdentity: { uid: alice } },
      { deleteGroup: { uid: other } },
    ],
  });
  t.is(res.status, 200);
  t.true(res.body.deltas.length > 0);
  t.deepEqual(await count(), before);
});

test('the snapshot a simulation reads in is one read-only transaction: a write inside fails', async (t) => {
  const uow = new KnexUnitOfWork(s.db.knex);
  await t.throwsAsync(
    uow.snapshot((tx) => kx(tx)('groups').where({ uid: org }).update({ name: 'renamed' })),
  );
  const [row] = await s.db.knex('groups').where({ uid: org }).select('name');
  t.is(row.name, 'sim-org');
  // One snapshot: its now() does not move between statements.
  const [a, b] = await uow.snapshot(async (tx) => {
    const first = (await kx(tx).raw('SELECT clock_timestamp() AS c, now() AS n')).rows[0];
    await new Promise((r) => setTimeout(r, 20));
    const second = (await kx(tx).raw('SELECT now() AS n')).rows[0];
    return [first.n.getTime(), second.n.getTime()];
  });
  t.is(a, b);
});

test('gRPC answers as REST does', async (t) => {
  const body = {
    changes: [
      { createRoleBinding: { groupUid: folder, identityUid: alice, roleUid: reader } },
      { deleteRoleBinding: { uid: bobAtFolder } },
    ],
    pageSize: 1,
    explain: true,
  };
  const rest = await s.admin.post(SIM, body);
  const grpc = await s.grpcAdmin.call(AccessService, 'SimulateAccess', body);
  t.true(grpc.ok);
  // proto3 JSON leaves out what is empty or zero; page tokens are sealed afresh each time.
  const plain = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.length === 0 ? undefined : x.map(plain);
    if (x && typeof x === 'object')
      return Object.fromEntries(
        Object.entries(x)
          .filter(([k]) => k !== 'nextPageToken')
          .map(([k, v]) => [k, plain(v)])
          .filter(([, v]) => v !== undefined),
      );
    return x === '' || x === 0 ? undefined : x;
  };
  t.truthy(grpc.ok && grpc.json.nextPageToken);
  t.deepEqual(plain(grpc.ok && grpc.json), plain(rest.body));
});

test('an empty or malformed change set is INVALID_ARGUMENT', async (t) => {
  t.is((await s.admin.post(SIM, { changes: [] })).status, 400);
  t.is((await s.admin.post(SIM, { changes: [{ deleteGroup: { uid: 'nope' } }] })).status, 400);
  t.is(
    (
      await s.admin.post(SIM, {
        changes: [{ deleteGroup: { uid: org }, deleteIdentity: { uid: alice } }],
      })
    ).status,
    400,
  );
  t.is((await s.client().post(SIM, { changes: [{ deleteGroup: { uid: org } }] })).status, 401);
});
