import test from 'ava';
import { AccessRequestsService } from '../../src/gen/arbor/iam/v2beta1/access_requests_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';

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

test('the request policy over gRPC: get and set as REST, with the same authorization', async (t) => {
  const folder = await createGroup(s.admin, 'grpc-policy', org);
  const hidden = await createGroup(s.admin, 'grpc-policy-hidden');
  // Holds groups.update but may not create bindings: it may not set how bindings are approved.
  const updater = await createRole(s.admin, org, 'updater', ['groups.list', 'groups.update']);
  const owner = await createRole(s.admin, org, 'policy-owner', [
    'groups.list',
    'groups.update',
    'role_bindings.create',
  ]);
  const u = await createIdentity(s.admin, org, 'updater');
  const o = await createIdentity(s.admin, org, 'policy-owner');
  await createBinding(s.admin, folder, u, updater);
  await createBinding(s.admin, folder, o, owner);
  const up = s.grpc((await s.arbor.tokens.sign(u, { iss: ISSUER, sub: 'sub-updater' })).token);
  const ow = s.grpc((await s.arbor.tokens.sign(o, { iss: ISSUER, sub: 'sub-owner' })).token);
  const asks = s.grpc(asker);

  const defaults = await asks.call(AccessRequestsService, 'GetAccessRequestPolicy', {
    groupUid: folder,
  });
  t.deepEqual(defaults.ok && defaults.json, { approvals: 1, timeoutSeconds: 604800 });
  const denied = await up.call(AccessRequestsService, 'SetAccessRequestPolicy', {
    groupUid: folder,
    approvals: 1,
  });
  t.is(denied.code, 7, 'PERMISSION_DENIED without role_bindings.create');
  t.regex(!denied.ok ? denied.message : '', /missing capability role_bindings\.create/);
  const byAsker = await asks.call(AccessRequestsService, 'SetAccessRequestPolicy', {
    groupUid: folder,
    approvals: 1,
  });
  t.is(byAsker.code, 7, 'PERMISSION_DENIED: may list the group, may not update it');
  const unseen = await ow.call(AccessRequestsService, 'SetAccessRequestPolicy', {
    groupUid: hidden,
    approvals: 2,
  });
  t.is(unseen.code, 5, 'NOT_FOUND: a group it may not list');
  const unseenGet = await ow.call(AccessRequestsService, 'GetAccessRequestPolicy', {
    groupUid: hidden,
  });
  t.is(unseenGet.code, 5);
  for (const bad of [{ approvals: 0 }, { approvals: 11 }, { approvals: 2, timeoutSeconds: 59 }]) {
    const r = await ow.call(AccessRequestsService, 'SetAccessRequestPolicy', {
      groupUid: folder,
      ...bad,
    });
    t.is(r.code, 3, `INVALID_ARGUMENT: ${JSON.stringify(bad)}`);
  }
  const set = await ow.call(AccessRequestsService, 'SetAccessRequestPolicy', {
    groupUid: folder,
    approvals: 2,
    timeoutSeconds: 3600,
  });
  t.deepEqual(set.ok && set.json, { approvals: 2, timeoutSeconds: 3600, groupUid: folder });
  // REST reads what gRPC set, and refuses the same caller the same way.
  const rest = await s.admin.post('/iam/v2beta1/accessRequests:getPolicy', { groupUid: folder });
  t.deepEqual(rest.body, { approvals: 2, timeoutSeconds: 3600, groupUid: folder });
  const restDenied = await s
    .client((await s.arbor.tokens.sign(u, { iss: ISSUER, sub: 'sub-updater' })).token)
    .post('/iam/v2beta1/accessRequests:setPolicy', { groupUid: folder, approvals: 1 });
  t.is(restDenied.status, 403);
  // Inherited below: a request at a child group keeps the folder's policy.
  const child = await createGroup(s.admin, 'grpc-policy-child', folder);
  const below = await asks.call(AccessRequestsService, 'GetAccessRequestPolicy', {
    groupUid: child,
  });
  t.deepEqual(below.ok && below.json, { approvals: 2, timeoutSeconds: 3600, groupUid: folder });
  for (const c of [up, ow, asks]) c.close();
});

test('a folder owner approves over gRPC a request at its folder by an identity of the organization', async (t) => {
  // acme/platform/ci: the owner of platform cannot list the asker, who lives at the organization.
  const platform = await createGroup(s.admin, 'grpc-platform', org);
  const ci = await createGroup(s.admin, 'grpc-ci', platform);
  const bob = await createIdentity(s.admin, platform, 'grpc-bob');
  await createBinding(s.admin, platform, bob, await builtinRoleUid(s.admin, 'owner'));
  const bobToken = (await s.arbor.tokens.sign(bob, { iss: ISSUER, sub: 'sub-grpc-bob' })).token;
  const b = s.grpc(bobToken);
  const a = s.grpc(asker);
  const made = await a.call(AccessRequestsService, 'CreateAccessRequest', {
    parent: ci,
    accessRequest: { roleUid: reader, durationSeconds: 600, reason: 'ci fire' },
  });
  t.true(made.ok, JSON.stringify(made));
  if (!made.ok) return;
  const inbox = await b.call(AccessRequestsService, 'ListAccessRequests', { state: 'PENDING' });
  t.deepEqual(inbox.ok && inbox.json.accessRequests.map((r: any) => r.uid), [made.json.uid]);
  const ok = await b.call(AccessRequestsService, 'ApproveAccessRequest', { uid: made.json.uid });
  t.true(ok.ok, JSON.stringify(ok));
  if (ok.ok) t.is(ok.json.state, 'APPROVED');
  // Nothing else came into sight: the asker is still not Bob's to get.
  const rest = s.client(bobToken);
  t.is((await rest.get(`/iam/v2beta1/identities/${made.json.requesterUid}`)).status, 404);
  a.close();
  b.close();
});
