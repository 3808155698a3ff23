import { create, fromBinary, toBinary, type DescService } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import fc from 'fast-check';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { AccessRequestsService } from '../../src/gen/arbor/iam/v2beta1/access_requests_pb.js';
import { GroupInvitesService } from '../../src/gen/arbor/iam/v2beta1/group_invites_pb.js';
import { RoleBindingsService } from '../../src/gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { durationSecondsArb, timestampArb } from '../helpers/fuzz-arbitraries.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';

/**
 * Extreme instants through the gRPC door: role bindings created and shortened, access
 * requests made and approved, invites moved and simulated bindings, each with Timestamps
 * (and Durations) at and past what proto3 JSON and RFC 3339 can carry, which binary
 * protobuf carries anyway. No call may answer INTERNAL or UNKNOWN, and afterwards every
 * read over what was made (Get, the organization-wide List, SimulateAccess) must succeed.
 * A fixed seed; `ARBOR_FUZZ_INSTANT_RUNS` (and `ARBOR_FUZZ_SEED`) for more.
 */
const RUNS = Number(process.env.ARBOR_FUZZ_INSTANT_RUNS ?? 120);
const SEED = Number(process.env.ARBOR_FUZZ_SEED ?? 0x9a3b);

let s: GrpcTestServer;
let org: string;
let roles: string[];
let people: string[];
let askerToken: string;
let invite: string;

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'instant-fuzz');
  roles = [];
  for (const name of ['r1', 'r2', 'r3'])
    roles.push(await createRole(s.admin, org, name, ['groups.list']));
  people = [];
  for (const name of ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'])
    people.push(await createIdentity(s.admin, org, name));
  const looker = await createRole(s.admin, org, 'looker', ['groups.list', 'roles.list']);
  await createBinding(s.admin, org, people[0]!, looker);
  askerToken = (await s.arbor.tokens.sign(people[0]!, { iss: ISSUER, sub: 'sub-asker' })).token;
  const inv = await s.admin.post(`/iam/v2beta1/groupInvites/${org}`, {
    roleUid: roles[0],
    ttl: '3600s',
  });
  if (inv.status !== 200) throw new Error(JSON.stringify(inv.body));
  invite = inv.body.uid as string;
});
test.after.always(async () => {
  await s?.close();
});

interface Answer {
  code: number;
  message: string;
  out?: any;
}

/** One unary call with a request made from `init`: what JSON cannot say, binary can. */
function call(
  service: DescService,
  name: string,
  init: Record<string, unknown>,
  token = ADMIN_TOKEN,
): Promise<Answer> {
  const m = service.methods.find((x) => x.name === name)!;
  const client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      `/${service.typeName}/${m.name}`,
      (msg: any) => Buffer.from(toBinary(m.input, msg)),
      (buf: Buffer) => fromBinary(m.output, buf),
      create(m.input, init as never),
      md,
      (err, out) => {
        client.close();
        if (err) resolve({ code: err.code, message: decodeURIComponent(err.details) });
        else resolve({ code: 0, message: '', out });
      },
    );
  });
}

const ts = timestampArb;
const opArb = fc.oneof(
  fc.record({
    op: fc.constant('bind' as const),
    who: fc.nat(5),
    role: fc.nat(2),
    notBefore: fc.option(ts, { nil: undefined }),
    expireTime: fc.option(ts, { nil: undefined }),
  }),
  fc.record({ op: fc.constant('shorten' as const), expireTime: ts }),
  fc.record({
    op: fc.constant('ask' as const),
    role: fc.nat(2),
    notBefore: fc.option(ts, { nil: undefined }),
    durationSeconds: durationSecondsArb.filter((d) => Number.isInteger(d) && Math.abs(d) < 2 ** 31),
  }),
  fc.record({
    op: fc.constant('simulate' as const),
    notBefore: fc.option(ts, { nil: undefined }),
    expireTime: fc.option(ts, { nil: undefined }),
  }),
  fc.record({
    op: fc.constant('invite' as const),
    expirationTime: ts,
    ttl: fc.option(
      fc.record({
        seconds: fc.constantFrom(60n, 315_576_000_001n, -(2n ** 63n), 2n ** 63n - 1n),
        nanos: fc.constantFrom(0, -1, 1_000_000_000),
      }),
      { nil: undefined },
    ),
  }),
);

type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

const made: string[] = [];

async function apply(o: Op): Promise<Answer> {
  switch (o.op) {
    case 'bind': {
      const a = await call(RoleBindingsService, 'CreateRoleBinding', {
        parent: org,
        roleBinding: {
          identityUid: people[o.who],
          roleUid: roles[o.role],
          notBefore: o.notBefore,
          expireTime: o.expireTime,
        },
      });
      if (a.code === 0) made.push(a.out.uid);
      return a;
    }
    case 'shorten':
      if (made.length === 0) return { code: 0, message: '' };
      return call(RoleBindingsService, 'UpdateRoleBinding', {
        roleBinding: { uid: made[made.length - 1], expireTime: o.expireTime },
        updateMask: { paths: ['expire_time'] },
      });
    case 'ask': {
      const a = await call(
        AccessRequestsService,
        'CreateAccessRequest',
        {
          parent: org,
          accessRequest: {
            roleUid: roles[o.role],
            durationSeconds: o.durationSeconds,
            reason: 'fuzz',
            notBefore: o.notBefore,
          },
        },
        askerToken,
      );
      if (a.code !== 0) return a;
      const approved = await call(AccessRequestsService, 'ApproveAccessRequest', {
        uid: a.out.uid,
      });
      if (approved.code === 0 && approved.out.bindingUid) made.push(approved.out.bindingUid);
      return approved;
    }
    case 'simulate':
      return call(AccessService, 'SimulateAccess', {
        changes: [
          {
            change: {
              case: 'createRoleBinding',
              value: {
                groupUid: org,
                identityUid: people[1],
                roleUid: roles[0],
                notBefore: o.notBefore,
                expireTime: o.expireTime,
              },
            },
          },
        ],
      });
    case 'invite':
      return call(GroupInvitesService, 'UpdateGroupInvite', {
        groupInvite: { uid: invite, expirationTime: o.expirationTime, ttl: o.ttl },
        updateMask: { paths: ['expiration_time'] },
      });
  }
}

const FAULTS = new Set([grpc.status.INTERNAL, grpc.status.UNKNOWN]);

test.serial(
  'gRPC: extreme instants are refused or taken, never INTERNAL; every later read succeeds',
  async (t) => {
    const codes = new Map<number, number>();
    let failure = '';
    await fc.assert(
      fc.asyncProperty(opArb, async (o) => {
        const a = await apply(o);
        codes.set(a.code, (codes.get(a.code) ?? 0) + 1);
        if (FAULTS.has(a.code)) {
          failure = `${JSON.stringify(o, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))} → ${a.code} ${a.message}`;
          throw new Error(failure);
        }
      }),
      {
        numRuns: RUNS,
        seed: SEED,
        endOnFailure: true,
        reporter: (out) => {
          if (out.failed)
            throw new Error(
              `instant fuzz failed (seed ${out.seed}): ${failure || String(out.errorInstance)}`,
            );
        },
      },
    );
    t.log(
      `instant fuzz: ${RUNS} ops; codes ${JSON.stringify(Object.fromEntries(codes))}; ${made.length} bindings made`,
    );
    t.true((codes.get(0) ?? 0) > 0, 'some calls succeeded');
    t.true((codes.get(grpc.status.INVALID_ARGUMENT) ?? 0) > 0, 'some were refused');
    // Every read over what was made.
    for (const uid of made) {
      const g = await call(RoleBindingsService, 'GetRoleBinding', { uid });
      t.is(g.code, 0, `${uid}: ${g.message}`);
    }
    const list = await call(RoleBindingsService, 'ListRoleBindings', {
      uidp: { descendantsOf: org },
      pageSize: 200,
    });
    t.is(list.code, 0, list.message);
    const requests = await call(AccessRequestsService, 'ListAccessRequests', {
      uidp: { descendantsOf: org },
    });
    t.is(requests.code, 0, requests.message);
    const inv = await call(GroupInvitesService, 'GetGroupInvite', { uid: invite });
    t.is(inv.code, 0, inv.message);
    const sim = await call(AccessService, 'SimulateAccess', {
      changes: made.slice(0, 50).map((uid) => ({
        change: { case: 'deleteRoleBinding', value: { uid } },
      })),
    });
    t.true(made.length === 0 || sim.code === 0, sim.message);
  },
);
