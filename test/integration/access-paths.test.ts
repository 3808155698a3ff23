import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { AccessRequestsService } from '../../src/gen/arbor/iam/v2beta1/access_requests_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';

// Paths of names beside uids in access, access-request and audit answers, as each caller
// may see them: a folder owner sees `platform` and below, never `acme` or what hangs
// directly under it, so its paths start at `platform` and name nothing above.
let s: GrpcTestServer;
let org: string;
let platform: string;
let team: string;
let ben: string;
let ext: string;
let deleter: string;
let local: string;
let owenToken: string;
let benToken: string;
let blindToken: string;
const A = '/iam/v2beta1/access';

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'acme');
  platform = await createGroup(s.admin, 'platform', org);
  team = await createGroup(s.admin, 'team', platform);
  ben = await createIdentity(s.admin, platform, 'ben');
  const owen = await createIdentity(s.admin, platform, 'owen');
  // At the organization: a holder the folder owner counts (by its binding) but cannot name.
  ext = await createIdentity(s.admin, org, 'ext');
  const blind = await createIdentity(s.admin, org, 'blind');
  deleter = await createRole(s.admin, org, 'deleter', ['groups.list', 'groups.delete']);
  local = await createRole(s.admin, platform, 'local', ['groups.delete']);
  const folderOwner = await createRole(s.admin, org, 'folder-owner', [
    'groups.list',
    'identity.list',
    'roles.list',
    'role_bindings.list',
    'audit.list',
  ]);
  // Reads the audit trail and the bindings of the folder, and may list no group or identity.
  const auditor = await createRole(s.admin, org, 'auditor', ['audit.list', 'role_bindings.list']);
  await createBinding(s.admin, platform, ben, deleter);
  await createBinding(s.admin, platform, ext, local);
  await createBinding(s.admin, platform, owen, folderOwner);
  await createBinding(s.admin, platform, blind, auditor);
  owenToken = (await s.arbor.tokens.sign(owen, { iss: ISSUER, sub: 'sub-owen' })).token;
  benToken = (await s.arbor.tokens.sign(ben, { iss: ISSUER, sub: 'sub-ben' })).token;
  blindToken = (await s.arbor.tokens.sign(blind, { iss: ISSUER, sub: 'sub-blind' })).token;
});
test.after.always(async () => {
  await s?.close();
});

const check = { capability: 'groups.delete' };

test('check: the admin reads whole paths; a folder owner reads them from its folder', async (t) => {
  const whole = await s.admin.post(`${A}:check`, { ...check, identityUid: ben, groupUid: team });
  t.is(whole.status, 200);
  t.is(whole.body.identityPath, 'acme/platform/ben');
  t.is(whole.body.groupPath, 'acme/platform/team');
  t.is(whole.body.grants[0].groupPath, 'acme/platform');
  t.is(whole.body.grants[0].rolePath, 'acme/deleter');
  // The uids keep their meaning.
  t.is(whole.body.identityUid, ben);
  t.is(whole.body.grants[0].groupUid, platform);

  const part = await s.client(owenToken).post(`${A}:check`, {
    ...check,
    identityUid: ben,
    groupUid: team,
  });
  t.is(part.status, 200);
  t.is(part.body.identityPath, 'platform/ben');
  t.is(part.body.groupPath, 'platform/team');
  t.is(part.body.grants[0].groupPath, 'platform');
  // The role is defined at the organization, which the folder owner cannot see.
  t.false('rolePath' in part.body.grants[0]);
  t.false(JSON.stringify(part.body).includes('acme'));
  t.false(JSON.stringify(part.body).includes('deleter'));
});

test('who-can: a holder the caller may not list is shown by uid, with no path', async (t) => {
  const q = `${A}:whoCan?group=${team}&capability=groups.delete`;
  const res = await s.client(owenToken).get(q);
  t.is(res.status, 200);
  type H = { identityUid: string; identityPath?: string; grants: { rolePath?: string }[] };
  const byUid = new Map((res.body.identities as H[]).map((h) => [h.identityUid, h]));
  t.is(byUid.get(ben)?.identityPath, 'platform/ben');
  const hidden = byUid.get(ext);
  t.truthy(hidden);
  t.false('identityPath' in hidden!);
  t.is(hidden!.grants[0]!.rolePath, 'platform/local');
  t.false(JSON.stringify(res.body).includes('ext'));

  // The same over gRPC.
  const g = await s.grpc(owenToken).call(AccessService, 'WhoCan', {
    group: team,
    capability: 'groups.delete',
  });
  t.true(g.ok, JSON.stringify(g));
  if (!g.ok) return;
  const gBy = new Map((g.json.identities as H[]).map((h) => [h.identityUid, h] as const));
  t.is(gBy.get(ben)?.identityPath, 'platform/ben');
  t.false('identityPath' in gBy.get(ext)!);
  t.is(gBy.get(ext)!.grants[0]!.rolePath, 'platform/local');
});

test('what-can and check over gRPC carry the paths too', async (t) => {
  const owen = s.grpc(owenToken);
  const what = await owen.call(AccessService, 'WhatCan', { identity: ben });
  t.true(what.ok, JSON.stringify(what));
  if (!what.ok) return;
  t.deepEqual(
    what.json.groups.map((g: { groupPath?: string }) => g.groupPath),
    ['platform'],
  );
  t.false('rolePath' in what.json.groups[0].bindings[0]);
  const admin = await s.grpcAdmin.call(AccessService, 'WhatCan', { identity: ext });
  t.true(admin.ok);
  if (!admin.ok) return;
  t.is(admin.json.groups[0].groupPath, 'acme/platform');
  t.is(admin.json.groups[0].bindings[0].rolePath, 'acme/platform/local');
  const c = await owen.call(AccessService, 'CheckAccess', {
    identityUid: ben,
    capability: 'groups.delete',
    groupUid: team,
  });
  t.true(c.ok);
  if (!c.ok) return;
  t.is(c.json.identityPath, 'platform/ben');
  t.is(c.json.groupPath, 'platform/team');
});

test('access requests: paths as the caller sees them, on REST and gRPC', async (t) => {
  const viewer = await builtinRoleUid(s.admin, 'viewer');
  const made = await s.client(benToken).post(`/iam/v2beta1/accessRequests/${team}`, {
    roleUid: viewer,
    durationSeconds: 600,
    reason: 'paths',
  });
  t.is(made.status, 200, JSON.stringify(made.body));
  t.is(made.body.groupPath, 'platform/team');
  t.is(made.body.requesterPath, 'platform/ben');
  t.is(made.body.rolePath, 'viewer');
  const got = await s.grpcAdmin.call(AccessRequestsService, 'GetAccessRequest', {
    uid: made.body.uid,
  });
  t.true(got.ok);
  if (!got.ok) return;
  t.is(got.json.groupPath, 'acme/platform/team');
  t.is(got.json.requesterPath, 'acme/platform/ben');
  const list = await s.admin.get(`/iam/v2beta1/accessRequests`);
  t.is(list.body.accessRequests[0].requesterPath, 'acme/platform/ben');
});

test('audit: the path of the resource a record is about, where the caller may see it', async (t) => {
  const q = `/audit/v2beta1/events?resource_uid=${ben}`;
  const admin = await s.admin.get(q);
  t.is(admin.status, 200);
  t.is(admin.body.events[0].resourcePath, 'acme/platform/ben');
  const owen = await s.client(owenToken).get(q);
  t.is(owen.body.events[0].resourcePath, 'platform/ben');
  const team1 = await s.client(owenToken).get(`/audit/v2beta1/events?resource_uid=${team}`);
  t.is(team1.body.events[0].resourcePath, 'platform/team');
  const platform1 = await s.client(owenToken).get(`/audit/v2beta1/events?resource_uid=${platform}`);
  // Its own folder is named from itself: the organization above stays unnamed.
  t.is(platform1.body.events[0].resourcePath, 'platform');
  // May read the records, may list no group: no path at all.
  const blind = await s.client(blindToken).get(q);
  t.is(blind.status, 200);
  t.true(blind.body.events.length > 0);
  t.false('resourcePath' in blind.body.events[0]);
  // A role binding has no name: no path.
  const bindings = await s.admin.get(
    `/audit/v2beta1/events?resource_type=iam.arbor.dev/RoleBinding`,
  );
  t.true(bindings.body.events.length > 0);
  t.false('resourcePath' in bindings.body.events[0]);
});
