import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type DescService,
} from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import {
  AccessRequestsService,
  CreateAccessRequestRequestSchema,
} from '../../src/gen/arbor/iam/v2beta1/access_requests_pb.js';
import {
  CreateRoleBindingRequestSchema,
  RoleBindingsService,
} from '../../src/gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN, type Client } from '../helpers/server.js';

/**
 * Every instant the service takes lies between 0001-01-01T00:00:00Z and
 * 9999-12-31T23:59:59.999Z, what RFC 3339 and google.protobuf.Timestamp can carry, and is
 * refused alike on both doors and both databases otherwise. A request cannot be scheduled
 * so late that its approval would make an expiry past that range. And an instant stored
 * out of range anyway (by an older release, or by hand) never turns a read into INTERNAL:
 * the doors show it clamped into the range.
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let alice: string;
let reader: string;
let aliceToken: string;
let asAlice: Client;
const RANGE =
  'must be an RFC 3339 time between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z';
const RB = '/iam/v2beta1/roleBindings';
const AR = '/iam/v2beta1/accessRequests';

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'instant-org');
  folder = await createGroup(s.admin, 'folder', org);
  alice = await createIdentity(s.admin, org, 'alice');
  reader = await createRole(s.admin, org, 'reader', ['groups.list']);
  const looker = await createRole(s.admin, org, 'looker', ['groups.list', 'roles.list']);
  await createBinding(s.admin, org, alice, looker);
  aliceToken = (await s.arbor.tokens.sign(alice, { iss: ISSUER, sub: 'sub-alice' })).token;
  asAlice = s.client(aliceToken);
});
test.after.always(async () => {
  await s?.close();
});

/** A gRPC call whose request is a message made from `init` (which JSON cannot always say). */
function callRaw(
  service: DescService,
  name: string,
  input: DescMessage,
  init: Record<string, unknown>,
  token = ADMIN_TOKEN,
): Promise<{ code: number; message: string }> {
  const m = service.methods.find((x) => x.name === name)!;
  const client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      `/${service.typeName}/${m.name}`,
      (msg: any) => Buffer.from(toBinary(input, msg)),
      (buf: Buffer) => fromBinary(m.output, buf),
      create(input, init as never),
      md,
      (err) => {
        client.close();
        resolve(
          err
            ? { code: err.code, message: decodeURIComponent(err.details) }
            : { code: 0, message: '' },
        );
      },
    );
  });
}

/** Seconds of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z. */
const YEAR_0 = -62167219200n;
const YEAR_10000 = 253402300800n;

test('a year-0 notBefore is INVALID_ARGUMENT on REST and gRPC, with one message', async (t) => {
  for (const notBefore of [
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:30:00+01:00',
    '9999-12-31T23:30:00-01:00',
    '+010000-01-01T00:00:00Z',
    '2026-01-01T00:00:00.1234567891Z',
    '2026-06-30T23:59:60Z',
    '2026-01-01T00:00:00+24:00',
  ]) {
    const r = await s.admin.post(`${RB}/${folder}`, {
      identityUid: alice,
      roleUid: reader,
      notBefore,
    });
    t.is(r.status, 400, notBefore);
    t.is(r.body.message, `Invalid argument: notBefore: ${RANGE}`, notBefore);
  }
  for (const seconds of [YEAR_0, YEAR_10000]) {
    const g = await callRaw(
      RoleBindingsService,
      'CreateRoleBinding',
      CreateRoleBindingRequestSchema,
      {
        parent: folder,
        roleBinding: { identityUid: alice, roleUid: reader, notBefore: { seconds } },
      },
    );
    t.is(g.code, grpc.status.INVALID_ARGUMENT, String(seconds));
    t.is(g.message, `Invalid argument: notBefore: ${RANGE}`);
  }
  const nanos = await callRaw(
    RoleBindingsService,
    'CreateRoleBinding',
    CreateRoleBindingRequestSchema,
    {
      parent: folder,
      roleBinding: { identityUid: alice, roleUid: reader, expireTime: { seconds: 1n, nanos: -1 } },
    },
  );
  t.is(nanos.code, grpc.status.INVALID_ARGUMENT);
  t.is(nanos.message, `Invalid argument: expireTime: ${RANGE}`);
});

test('the ends of the range are taken', async (t) => {
  const r = await s.admin.post(`${RB}/${folder}`, {
    identityUid: alice,
    roleUid: reader,
    notBefore: '0001-01-01T00:00:00Z',
    expireTime: '9999-12-31T23:59:59.999999999Z',
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.notBefore, '0001-01-01T00:00:00.000Z');
  t.is(r.body.expireTime, '9999-12-31T23:59:59.999Z');
  const g = await s.grpcAdmin.call(RoleBindingsService, 'GetRoleBinding', { uid: r.body.uid });
  t.true(g.ok, JSON.stringify(g));
  t.is((await s.admin.delete(`${RB}/${r.body.uid}`)).status, 200);
});

test('a request cannot start later than a year from now, so approval never computes year 10000', async (t) => {
  for (const notBefore of [
    '9999-12-31T00:00:00Z',
    new Date(Date.now() + 400 * 86_400_000).toISOString(),
  ]) {
    const r = await asAlice.post(`${AR}/${folder}`, {
      roleUid: reader,
      durationSeconds: 90 * 86_400,
      reason: 'late',
      notBefore,
    });
    t.is(r.status, 400, notBefore);
    t.is(r.body.message, 'Invalid argument: notBefore: must be at most 365 days from now');
  }
  const g = await callRaw(
    AccessRequestsService,
    'CreateAccessRequest',
    CreateAccessRequestRequestSchema,
    {
      parent: folder,
      accessRequest: {
        roleUid: reader,
        durationSeconds: 600,
        reason: 'late',
        notBefore: { seconds: 253402214400n },
      },
    },
    aliceToken,
  );
  t.is(g.code, grpc.status.INVALID_ARGUMENT);
  t.is(g.message, 'Invalid argument: notBefore: must be at most 365 days from now');
  const year0 = await asAlice.post(`${AR}/${folder}`, {
    roleUid: reader,
    durationSeconds: 600,
    reason: 'early',
    notBefore: '0000-06-01T00:00:00Z',
  });
  t.is(year0.status, 400);
  t.is(year0.body.message, `Invalid argument: notBefore: ${RANGE}`);
});

test('a binding stored with instants out of range reads on every door, clamped into the range', async (t) => {
  const group = await createGroup(s.admin, 'stored', org);
  const uid = await createBinding(s.admin, group, alice, reader);
  const other = await createBinding(
    s.admin,
    group,
    await createIdentity(s.admin, org, 'bob'),
    reader,
  );
  // As a deployment that stored them before the columns were checked: the checks are lifted.
  await liftChecks('role_bindings');
  await s.db.knex.raw(
    `UPDATE role_bindings SET not_before = '0001-01-01 BC', expire_time = '10000-01-01T00:00:00Z' WHERE uid = ?`,
    [uid],
  );
  await s.db.knex.raw(
    `UPDATE role_bindings SET not_before = '-infinity', expire_time = 'infinity' WHERE uid = ?`,
    [other],
  );
  const rest = await s.admin.get(`${RB}/${uid}`);
  t.is(rest.status, 200);
  t.is(rest.body.expireTime, '9999-12-31T23:59:59.999Z');
  t.is(rest.body.notBefore, '0001-01-01T00:00:00.000Z');
  for (const b of [uid, other]) {
    const g = await s.grpcAdmin.call(RoleBindingsService, 'GetRoleBinding', { uid: b });
    t.true(g.ok, JSON.stringify(g));
    t.is((await s.admin.get(`${RB}/${b}`)).status, 200);
  }
  const list = await s.grpcAdmin.call(RoleBindingsService, 'ListRoleBindings', {
    uidp: { descendantsOf: org },
  });
  t.true(list.ok, JSON.stringify(list));
  const restList = await s.admin.get(`${RB}?uidp.descendants_of=${org}`);
  t.is(restList.status, 200);
  t.true(restList.body.roleBindings.length >= 3);
  for (const b of restList.body.roleBindings) {
    for (const v of [b.expireTime, b.notBefore]) if (v) t.regex(v, /^\d{4}-/);
  }
  const sim = await s.grpcAdmin.call(AccessService, 'SimulateAccess', {
    changes: [{ deleteRoleBinding: { uid } }, { deleteRoleBinding: { uid: other } }],
  });
  t.true(sim.ok, JSON.stringify(sim));
  t.is(
    (
      await s.admin.post('/iam/v2beta1/access:simulate', {
        changes: [{ deleteRoleBinding: { uid } }],
      })
    ).status,
    200,
  );
});

/** Drops the range checks of `table` (a fresh database per test file: nothing else sees it). */
async function liftChecks(table: string): Promise<void> {
  const r = await s.db.knex.raw(
    `SELECT conname FROM pg_constraint WHERE conrelid = ?::regclass AND conname LIKE '%in_range'`,
    [table],
  );
  for (const { conname } of r.rows as Array<{ conname: string }>) {
    await s.db.knex.raw(`ALTER TABLE ?? DROP CONSTRAINT ??`, [table, conname]);
  }
}
