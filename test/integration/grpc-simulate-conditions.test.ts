import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/**
 * gRPC's SimulateAccess takes and answers what REST's access:simulate does for conditional
 * bindings and delegation policies: a create_role_binding with a condition (conditional
 * entries carrying it, an invalid one refused with the same status), a
 * set_delegation_policy change (delegation_deltas), and a removal spelled with no actors
 * (proto3 JSON leaves the empty list out).
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let alice: string;
let bob: string;
let agent: string;
let reader: string;
const SIM = '/iam/v2beta1/access:simulate';
const HOURS = { expression: 'request.time.getHours() < 18', title: 'office hours' };

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'gsim-org');
  folder = await createGroup(s.admin, 'folder', org);
  alice = await createIdentity(s.admin, org, 'alice');
  bob = await createIdentity(s.admin, folder, 'bob');
  agent = await createIdentity(s.admin, org, 'agent');
  reader = await createRole(s.admin, org, 'reader', ['groups.list', 'repo.list']);
  await createBinding(s.admin, folder, bob, reader);
  const set = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
    identityUid: bob,
    actors: [agent],
    capabilities: ['groups.list'],
  });
  if (set.status !== 200) throw new Error(JSON.stringify(set.body));
});
test.after.always(async () => {
  await s?.close();
});

/** proto3 JSON leaves out what is empty or zero; page tokens are sealed afresh each time. */
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

async function both(body: Record<string, unknown>): Promise<{ rest: unknown; grpc: unknown }> {
  const rest = await s.admin.post(SIM, body);
  const grpc = await s.grpcAdmin.call(AccessService, 'SimulateAccess', body);
  if (rest.status !== 200) throw new Error(`REST ${rest.status}: ${JSON.stringify(rest.body)}`);
  if (!grpc.ok) throw new Error(`gRPC failed: ${JSON.stringify(grpc)}`);
  return { rest: rest.body, grpc: grpc.json };
}

test('a conditional binding: the same conditional entry, with its condition, on both doors', async (t) => {
  const { rest, grpc } = await both({
    changes: [
      {
        createRoleBinding: {
          groupUid: folder,
          identityUid: alice,
          roleUid: reader,
          condition: HOURS,
        },
      },
    ],
    explain: true,
  });
  const deltas = (grpc as { deltas: { condition?: unknown; effect: string }[] }).deltas;
  t.is(deltas.length, 1);
  t.is(deltas[0]!.effect, 'GAIN');
  t.like(deltas[0]!.condition, HOURS);
  t.deepEqual(plain(grpc), plain(rest));
});

test('an invalid condition: the same INVALID_ARGUMENT, naming the change and the position', async (t) => {
  const body = {
    changes: [
      {
        createRoleBinding: {
          groupUid: folder,
          identityUid: alice,
          roleUid: reader,
          condition: { expression: 'nope == 1' },
        },
      },
    ],
  };
  const rest = await s.admin.post(SIM, body);
  t.is(rest.status, 400);
  const grpc = await s.grpcAdmin.call(AccessService, 'SimulateAccess', body);
  t.false(grpc.ok);
  t.deepEqual(!grpc.ok && grpc.status, rest.body);
});

test('delegation policies: set and removed (no actors) answer the same delegation entries', async (t) => {
  const set = await both({
    changes: [
      {
        setDelegationPolicy: {
          identityUid: alice,
          actors: [agent],
          capabilities: ['groups.list'],
          maxLifetimeSeconds: 600,
        },
      },
    ],
  });
  const gained = (set.grpc as { delegationDeltas: { effect: string; after?: unknown }[] })
    .delegationDeltas;
  t.is(gained.length, 1);
  t.is(gained[0]!.effect, 'GAIN');
  t.deepEqual(gained[0]!.after, { capabilities: ['groups.list'], maxLifetimeSeconds: 600 });
  t.deepEqual(plain(set.grpc), plain(set.rest));

  // gRPC cannot send an empty list: no actors is the removal REST spells `actors: []`.
  const rest = await s.admin.post(SIM, {
    changes: [{ setDelegationPolicy: { identityUid: bob, actors: [] } }],
  });
  const grpc = await s.grpcAdmin.call(AccessService, 'SimulateAccess', {
    changes: [{ setDelegationPolicy: { identityUid: bob } }],
  });
  t.is(rest.status, 200, JSON.stringify(rest.body));
  t.true(grpc.ok);
  const lost = (grpc.ok ? grpc.json : {}) as { delegationDeltas: { effect: string }[] };
  t.deepEqual(
    lost.delegationDeltas.map((d) => d.effect),
    ['LOSE'],
  );
  t.deepEqual(plain(grpc.ok && grpc.json), plain(rest.body));
});
