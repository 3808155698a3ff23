import test from 'ava';
import type { ListRequest } from '../../src/core/list-request.js';
import { builtinRole } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { asIdentity, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let org: string;
let team: string;
let teamChild: string;
let sibling: string;
let otherOrg: string;
let member: string;
const listAll: ListRequest = {
  pageSize: 200,
  orderBy: { field: 'uid', direction: 'asc' },
  skip: 0,
  uidp: {},
  filters: {},
};

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'acme');
  team = await createGroup(s.admin, 'team', org);
  teamChild = await createGroup(s.admin, 'team-child', team);
  sibling = await createGroup(s.admin, 'sibling', org);
  otherOrg = await createGroup(s.admin, 'globex');
  member = await createIdentity(s.admin, org, 'member');
  await createBinding(s.admin, team, member, builtinRole('viewer').uid);
});
test.after.always(async () => {
  await s?.close();
});

test('grants: a binding at G grants on G and below, nowhere else', async (t) => {
  const can = (cap: 'groups.list' | 'groups.create', uid: string) =>
    s.arbor.authz.can(asIdentity(member), cap, uid);
  t.true(await can('groups.list', team));
  t.true(await can('groups.list', teamChild));
  t.true(await can('groups.list', `${teamChild}/${'7'.repeat(16)}`));
  t.false(await can('groups.list', org));
  t.false(await can('groups.list', sibling));
  t.false(await can('groups.list', otherOrg));
  t.false(await can('groups.create', team), 'viewer holds no write capability');
});

test('grants: services answer an identity principal from its bindings', async (t) => {
  const p = asIdentity(member);
  const groups = await s.arbor.services.groups.list(p, listAll);
  t.deepEqual(groups.items.map((g) => g.uid).sort(), [team, teamChild].sort());
  t.is((await s.arbor.services.groups.get(p, teamChild)).name, 'team-child');
  const hidden = await s.arbor.services.groups.get(p, sibling).catch((e: { code: number }) => e);
  t.is((hidden as { code: number }).code, 5);
  const denied = await s.arbor.services.groups
    .create(p, team, { name: 'nope' })
    .catch((e: { code: number }) => e);
  t.is((denied as { code: number }).code, 7);
  const bindings = await s.arbor.services.roleBindings.list(p, listAll);
  t.is(bindings.totalCount, '1');
});

test('grants: several roles at one group add up; a deleted binding stops granting', async (t) => {
  const who = await createIdentity(s.admin, org, 'stacked');
  const r1 = await createRole(s.admin, org, 'lists', ['groups.list']);
  const r2 = await createRole(s.admin, org, 'creates', ['groups.create']);
  await createBinding(s.admin, sibling, who, r1);
  const b2 = await createBinding(s.admin, sibling, who, r2);
  const grants = await s.arbor.authz.visibility(asIdentity(who), 'groups.create');
  t.deepEqual(grants, { kind: 'scopes', scopes: [sibling] });
  t.true(await s.arbor.authz.can(asIdentity(who), 'groups.list', sibling));
  await s.admin.delete(`/iam/v2beta1/roleBindings/${b2}`);
  t.false(await s.arbor.authz.can(asIdentity(who), 'groups.create', sibling));
});

test('grants: nobody can hand out capabilities they do not hold', async (t) => {
  const admin = await createIdentity(s.admin, org, 'binder');
  // The worker is one the binder can list: an identity it cannot see is as good as missing.
  const worker = await createIdentity(s.admin, team, 'worker');
  const binder = await createRole(s.admin, team, 'binder', [
    'groups.list',
    'identity.list',
    'role_bindings.create',
    'role_bindings.list',
    'roles.update',
    'roles.list',
  ]);
  await createBinding(s.admin, team, admin, binder);
  const p = () => asIdentity(admin);
  const svc = s.arbor.services.roleBindings;
  const escalate = await svc
    .create(p(), team, { identityUid: worker, roleUid: builtinRole('owner').uid })
    .catch((e: { code: number; message: string }) => e);
  t.is((escalate as { code: number }).code, 7);
  t.regex((escalate as { message: string }).message, /groups\.create/);
  const ok = await svc.create(p(), team, { identityUid: worker, roleUid: binder });
  t.is(ok.role.uid, binder);
  const selfService = await s.arbor.services.roles
    .update(p(), binder, { capabilities: ['groups.list', 'groups.delete'] }, undefined)
    .catch((e: { code: number }) => e);
  t.is((selfService as { code: number }).code, 7, 'no widening a role beyond what one holds');
  const elsewhere = await svc
    .create(p(), sibling, { identityUid: worker, roleUid: binder })
    .catch((e: { code: number }) => e);
  t.is((elsewhere as { code: number }).code, 5);
});
