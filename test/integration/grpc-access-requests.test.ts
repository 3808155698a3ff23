import test from 'ava';
import { AccessRequestsService } from '../../src/gen/arbor/iam/v2beta1/access_requests_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/**
 * AccessRequestsService over a real gRPC client: the same rules and answers as REST
 * (access-requests.test.ts has the rules; this checks the door).
 */
let s: GrpcTestServer;
let org: string;
let reader: string;
let asker: string;
let approver: string;

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'grpc-requests');
  reader = await createRole(s.admin, org, 'reader', ['groups.list', 'identity.list']);
  const looker = await createRole(s.admin, org, 'looker', ['groups.list', 'roles.list']);
  const granter = await createRole(s.admin, org, 'granter', [
    'groups.list',
    'identity.list',
    'roles.list',
    'role_bindings.create',
  ]);
  const a = await createIdentity(s.admin, org, 'asker');
  const b = await createIdentity(s.admin, org, 'approver');
  await createBinding(s.admin, org, a, looker);
  await createBinding(s.admin, org, b, granter);
  asker = (await s.arbor.tokens.sign(a, { iss: ISSUER, sub: 'sub-asker' })).token;
  approver = (await s.arbor.tokens.sign(b, { iss: ISSUER, sub: 'sub-approver' })).token;
});
test.after.always(async () => {
  await s?.close();
});

test('create, list, get, approve over gRPC answer as REST does', async (t) => {
  const a = s.grpc(asker);
  const b = s.grpc(approver);
  const made = await a.call(AccessRequestsService, 'CreateAccessRequest', {
    parent: org,
    accessRequest: {
      roleUid: reader,
      durationSeconds: 600,
      reason: 'grpc',
      // Output only: ignored.
      state: 'APPROVED',
      requesterUid: org,
    },
  });
  t.true(made.ok, JSON.stringify(made));
  if (!made.ok) return;
  t.is(made.json.state, 'PENDING');
  t.not(made.json.requesterUid, org);
  const rest = await s.client(asker).get(`/iam/v2beta1/accessRequests/${made.json.uid}`);
  const got = await a.call(AccessRequestsService, 'GetAccessRequest', { uid: made.json.uid });
  t.true(got.ok);
  if (got.ok) t.is(got.json.uid, rest.body.uid);
  const own = await a.call(AccessRequestsService, 'ApproveAccessRequest', { uid: made.json.uid });
  t.is(own.code, 7, 'PERMISSION_DENIED: not one’s own');
  const inbox = await b.call(AccessRequestsService, 'ListAccessRequests', { state: 'PENDING' });
  t.true(inbox.ok && inbox.json.accessRequests.some((r: any) => r.uid === made.json.uid));
  const ok = await b.call(AccessRequestsService, 'ApproveAccessRequest', {
    uid: made.json.uid,
    reason: 'fine',
  });
  t.true(ok.ok, JSON.stringify(ok));
  if (ok.ok) {
    t.is(ok.json.state, 'APPROVED');
    t.truthy(ok.json.bindingUid);
  }
  a.close();
  b.close();
});
