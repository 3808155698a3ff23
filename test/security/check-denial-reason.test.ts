import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';

/**
 * A denied check says why: `nearest`, the identity's bindings on the group's
 * path, nearest first, with what their roles grant. It must never name a binding the caller
 * could not list (who-can's rule), nor a role's capabilities the caller could not list.
 *
 * dave holds org-viewer at the org (b1), and folder-helper (b2) and org-viewer (b3) at the
 * folder. carol may list bindings, identities, groups and roles at the folder only.
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let sub: string;
let dave: string;
let carol: string;
let b1: string;
let b2: string;
let b3: string;
const A = '/iam/v2beta1/access';

const tokenFor = async (uid: string) =>
  (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${uid}` })).token;

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'reason-org');
  folder = await createGroup(s.admin, 'reason-folder', org);
  sub = await createGroup(s.admin, 'reason-sub', folder);
  dave = await createIdentity(s.admin, folder, 'dave');
  carol = await createIdentity(s.admin, folder, 'carol');
  const orgViewer = await createRole(s.admin, org, 'org-viewer', ['groups.list']);
  const helper = await createRole(s.admin, folder, 'folder-helper', ['repo.list', 'tag.list']);
  const auditor = await createRole(s.admin, folder, 'auditor', [
    'groups.list',
    'identity.list',
    'role_bindings.list',
    'roles.list',
  ]);
  b1 = await createBinding(s.admin, org, dave, orgViewer);
  b2 = await createBinding(s.admin, folder, dave, helper);
  b3 = await createBinding(s.admin, folder, dave, orgViewer);
  await createBinding(s.admin, folder, carol, auditor);
});
test.after.always(async () => {
  await s?.close();
});

const ask = { capability: 'groups.delete', groupUid: '' };
const uids = (body: any) => (body.nearest ?? []).map((h: any) => h.bindingUid);

test('the admin sees every binding on the path, nearest the group first', async (t) => {
  const res = await s.admin.post(`${A}:check`, { ...ask, groupUid: sub, identityUid: dave });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.false(res.body.allowed);
  t.deepEqual(uids(res.body).slice(0, 2).sort(), [b2, b3].sort());
  t.is(uids(res.body)[2], b1);
  const far = res.body.nearest[2];
  t.is(far.role.name, 'org-viewer');
  t.deepEqual(far.roleCapabilities, ['groups.list']);
  t.deepEqual(far.path, [org, folder, sub]);
  // Allowed: no reason is given.
  const ok = await s.admin.post(`${A}:check`, {
    identityUid: dave,
    capability: 'repo.list',
    groupUid: sub,
  });
  t.true(ok.body.allowed);
  t.deepEqual(ok.body.nearest, []);
});

test('a caller who may list bindings at the folder only: no binding above, no hidden role', async (t) => {
  const me = s.client(await tokenFor(carol));
  const res = await me.post(`${A}:check`, { ...ask, groupUid: sub, identityUid: dave });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.false(res.body.allowed);
  t.deepEqual(uids(res.body).sort(), [b2, b3].sort());
  const byUid = new Map(res.body.nearest.map((h: any) => [h.bindingUid, h]));
  t.like(byUid.get(b2), {
    role: { name: 'folder-helper' },
    roleCapabilities: ['repo.list', 'tag.list'],
  });
  // org-viewer is defined at the org, where carol may not list roles.
  t.like(byUid.get(b3), { role: { name: '' }, roleCapabilities: [] });
  t.false(JSON.stringify(res.body).includes(b1));
  t.false(JSON.stringify(res.body).includes('org-viewer'));

  const batch = await me.post(`${A}:batchCheck`, {
    checks: [{ ...ask, groupUid: sub, identityUid: dave }],
  });
  t.deepEqual(batch.body.results[0], res.body);

  const caller = s.grpc(await tokenFor(carol));
  const viaGrpc = await caller.call(AccessService, 'CheckAccess', {
    ...ask,
    groupUid: sub,
    identityUid: dave,
  });
  caller.close();
  if (!viaGrpc.ok) return t.fail(viaGrpc.message);
  t.deepEqual(uids(viaGrpc.json).sort(), [b2, b3].sort());
  t.false(JSON.stringify(viaGrpc.json).includes(b1));
});

test('an identity asking about itself sees its own bindings, and no role it cannot list', async (t) => {
  const me = s.client(await tokenFor(dave));
  const res = await me.post(`${A}:check`, { ...ask, groupUid: sub });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(uids(res.body).sort(), [b1, b2, b3].sort());
  for (const h of res.body.nearest) t.deepEqual(h.roleCapabilities, []);
});
