import test from 'ava';
import { builtinRole } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import {
  ISSUER,
  createBinding,
  createIdentity,
  createRole,
  fields,
  violations,
} from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let org: string;
let folder: string;
let sub: string;
let otherOrg: string;
let identity: string;
const B = '/iam/v2beta1/roleBindings';
const viewer = builtinRole('viewer').uid;
const editor = builtinRole('editor').uid;

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'rb-org', undefined, 'The org');
  folder = await createGroup(s.admin, 'folder', org, 'A folder');
  sub = await createGroup(s.admin, 'sub', folder);
  otherOrg = await createGroup(s.admin, 'rb-other');
  identity = await createIdentity(s.admin, org, 'deployer');
});
test.after.always(async () => {
  await s?.close();
});

test('role bindings: create answers the hydrated binding with createTime only', async (t) => {
  const res = await s.admin.post(`${B}/${folder}`, {
    identityUid: identity,
    roleUid: viewer,
    uid: 'ignored',
  });
  t.is(res.status, 200);
  t.regex(res.body.uid, new RegExp(`^${folder}/[0-9a-f]{16}$`));
  t.deepEqual(res.body, {
    uid: res.body.uid,
    identity: {
      uid: identity,
      name: 'deployer',
      description: '',
      subject: 'sub-deployer',
      issuer: ISSUER,
    },
    group: { uid: folder, name: 'folder', description: 'A folder' },
    role: { uid: viewer, name: 'viewer', description: 'Viewer Role (built-in)' },
    createTime: res.body.createTime,
    expired: false,
  });
  t.deepEqual((await s.admin.get(`${B}/${res.body.uid}`)).body, res.body);
});

test('role bindings: patterns and static keys hydrate subject and issuer', async (t) => {
  const patterned = await createIdentity(s.admin, org, 'patterned', {
    issuerPattern: 'https://ci\\.example/.*',
    subjectPattern: 'repo:.*',
  });
  const res = await s.admin.post(`${B}/${org}`, { identityUid: patterned, roleUid: viewer });
  t.like(res.body.identity, { subject: 'repo:.*', issuer: 'https://ci\\.example/.*' });
  const jwks = JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AA' }] });
  const fixed = await s.admin.post(`/iam/v2beta1/identities/${org}`, {
    name: 'static',
    staticKeys: { issuer: ISSUER, subject: 'svc', issuerKeys: jwks },
  });
  const b = await s.admin.post(`${B}/${org}`, { identityUid: fixed.body.uid, roleUid: viewer });
  t.like(b.body.identity, { subject: 'svc', issuer: ISSUER });
});

test('role bindings: input errors name identityUid or roleUid', async (t) => {
  const roleInOther = await createRole(s.admin, otherOrg, 'foreign', ['groups.list']);
  const roleInSub = await createRole(s.admin, sub, 'too-low', ['groups.list']);
  const stranger = await createIdentity(s.admin, otherOrg, 'stranger');
  const missing = `${org}/${'4'.repeat(16)}`;
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [{}, ['identityUid: identityUid is required', 'roleUid: roleUid is required']],
    [{ identityUid: 'x', roleUid: viewer }, ['identityUid: must be a uid path']],
    [{ identityUid: missing, roleUid: viewer }, ['identityUid: identity not found']],
    [{ identityUid: identity, roleUid: 'f'.repeat(40) }, ['roleUid: role not found']],
    [
      { identityUid: stranger, roleUid: viewer },
      [`identityUid: identity must belong to the group's organization`],
    ],
    [
      { identityUid: identity, roleUid: roleInOther },
      [`roleUid: role must be built in or defined at the binding's group or above it`],
    ],
    [
      { identityUid: identity, roleUid: roleInSub },
      [`roleUid: role must be built in or defined at the binding's group or above it`],
    ],
    [{ identityUid: identity, roleUid: viewer, colour: 1 }, ['colour: unknown field']],
  ];
  for (const [body, want] of cases) {
    const res = await s.admin.post(`${B}/${folder}`, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.deepEqual(violations(res.body), want);
  }
  t.is(
    (
      await s.admin.post(`${B}/${org}/${'5'.repeat(16)}`, {
        identityUid: identity,
        roleUid: viewer,
      })
    ).status,
    404,
  );
  // A role defined above the binding's group is fine.
  const above = await createRole(s.admin, org, 'from-above', ['groups.list']);
  t.is((await s.admin.post(`${B}/${sub}`, { identityUid: identity, roleUid: above })).status, 200);
});

test('role bindings: the same binding twice is ALREADY_EXISTS', async (t) => {
  const g = await createGroup(s.admin, 'dup', org);
  await createBinding(s.admin, g, identity, viewer);
  const res = await s.admin.post(`${B}/${g}`, { identityUid: identity, roleUid: viewer });
  t.is(res.status, 409);
  t.is(res.body.code, 6);
  t.is((await s.admin.get(`${B}?group=${g}`)).body.totalCount, '1');
});

test('role bindings: PATCH moves a binding to another role', async (t) => {
  const g = await createGroup(s.admin, 'patchy', org);
  const uid = await createBinding(s.admin, g, identity, viewer);
  const res = await s.admin.patch(`${B}/${uid}?update_mask=role_uid`, { roleUid: editor });
  t.is(res.status, 200);
  t.like(res.body.role, { uid: editor, name: 'editor' });
  t.false('updateTime' in res.body);
  await createBinding(s.admin, g, identity, viewer);
  const clash = await s.admin.patch(`${B}/${uid}`, { roleUid: viewer });
  t.is(clash.status, 409);
  const bad = await s.admin.patch(`${B}/${uid}`, { roleUid: 'nope' });
  t.deepEqual(fields(bad.body), ['roleUid']);
  const masked = await s.admin.patch(`${B}/${uid}?updateMask=group`, {});
  t.deepEqual(fields(masked.body), ['update_mask']);
  t.is((await s.admin.patch(`${B}/${g}/${'6'.repeat(16)}`, { roleUid: viewer })).status, 404);
});

test('role bindings: deleting one already gone is NOT_FOUND, a malformed uid is INVALID_ARGUMENT', async (t) => {
  const g = await createGroup(s.admin, 'deletes', org);
  const uid = await createBinding(s.admin, g, identity, viewer);
  t.deepEqual((await s.admin.delete(`${B}/${uid}`)).body, {});
  const again = await s.admin.delete(`${B}/${uid}`);
  t.is(again.status, 404);
  t.is(again.body.message, `Not found: iam.arbor.dev/RoleBinding ${uid}`);
  t.is((await s.admin.get(`${B}/${uid}`)).status, 404);
  const bad = await s.admin.delete(`${B}/not-a-uid`);
  t.is(bad.status, 400);
  t.deepEqual(fields(bad.body), ['uid']);
});

test('role bindings: deleting the identity deletes its bindings', async (t) => {
  const g = await createGroup(s.admin, 'cascade', org);
  const doomed = await createIdentity(s.admin, org, 'doomed');
  const uid = await createBinding(s.admin, g, doomed, viewer);
  t.is((await s.admin.delete(`/iam/v2beta1/identities/${doomed}`)).status, 200);
  t.is((await s.admin.get(`${B}/${uid}`)).status, 404);
  t.is((await s.admin.get(`${B}?identity=${doomed}`)).body.totalCount, '0');
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${g}`)).status, 200);
});

test('role bindings: a group holding a binding cannot be deleted', async (t) => {
  const g = await createGroup(s.admin, 'holds-binding', org);
  const uid = await createBinding(s.admin, g, identity, viewer);
  const res = await s.admin.delete(`/iam/v2beta1/groups/${g}`);
  t.is(res.body.code, 9);
  t.is(res.body.message, 'Precondition failed: cannot delete group with child role bindings');
  await s.admin.delete(`${B}/${uid}`);
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${g}`)).status, 200);
});

test('role bindings v1: lower-case path, identity/role names and flattened items', async (t) => {
  const g = await createGroup(s.admin, 'v1', org);
  const made = await s.admin.post(`/iam/v1/rolebindings/${g}`, {
    identity,
    role: viewer,
  });
  t.is(made.status, 200);
  t.like(made.body, {
    identity,
    group: { id: g, name: 'v1' },
    role: { id: viewer, name: 'viewer' },
    claimMatchIssuer: ISSUER,
    claimMatchSubject: 'sub-deployer',
  });
  const list = await s.admin.get(`/iam/v1/rolebindings?group=${g}`);
  t.deepEqual(
    list.body.items.map((b: { id: string }) => b.id),
    [made.body.id],
  );
  const put = await s.admin.put(`/iam/v1/rolebindings/${made.body.id}`, { identity, role: editor });
  t.like(put.body, { role: { id: editor } });
  t.is((await s.admin.delete(`/iam/v1/rolebindings/${made.body.id}`)).status, 200);
});
