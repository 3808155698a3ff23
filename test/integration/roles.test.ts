import test from 'ava';
import type { ListRequest } from '../../src/core/list-request.js';
import { BUILTIN_ROLES, builtinRole } from '../../src/resources/roles/builtin-roles.js';
import { allPages, createGroup } from '../helpers/fixtures.js';
import {
  asIdentity,
  createBinding,
  createIdentity,
  createRole,
  fields,
  violations,
} from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let org: string;
const R = '/iam/v2beta1/roles';
type Role = { uid: string; name: string; capabilities: string[] };
const listAll: ListRequest = {
  pageSize: 200,
  orderBy: { field: 'name', direction: 'asc' },
  skip: 0,
  uidp: {},
  filters: {},
};

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'roles-org');
});
test.after.always(async () => {
  await s?.close();
});

test('roles: built-ins are listed with no filter, with stable uids and their capabilities', async (t) => {
  const res = await s.admin.get(`${R}?page_size=200`);
  t.is(res.status, 200);
  for (const b of BUILTIN_ROLES) {
    const got = res.body.roles.find((r: Role) => r.name === b.name);
    t.like(got, { uid: b.uid, description: b.description, capabilities: [...b.capabilities] });
    t.regex(got.uid, /^[0-9a-f]{40}$/);
  }
  t.is(builtinRole('viewer').description, 'Viewer Role (built-in)');
});

test('roles: a caller with no bindings still sees every built-in and only those', async (t) => {
  const nobody = asIdentity(`${org}/${'9'.repeat(16)}`);
  const page = await s.arbor.services.roles.list(nobody, listAll);
  t.deepEqual(page.items.map((r) => r.name).sort(), BUILTIN_ROLES.map((b) => b.name).sort());
  const viewer = await s.arbor.services.roles.get(nobody, builtinRole('viewer').uid);
  t.is(viewer.name, 'viewer');
  const byName = (await s.admin.get(`${R}?name=registry.pull`)).body.roles;
  t.deepEqual(
    byName.map((r: Role) => r.uid),
    [builtinRole('registry.pull').uid],
  );
});

test('roles: built-ins cannot be updated or deleted (BUILT_IN_ROLE)', async (t) => {
  const uid = builtinRole('owner').uid;
  for (const res of [
    await s.admin.patch(`${R}/${uid}`, { description: 'mine now' }),
    await s.admin.delete(`${R}/${uid}`),
    await s.admin.put(`/iam/v1/roles/${uid}`, { name: 'owner', capabilities: ['groups.list'] }),
  ]) {
    t.is(res.status, 400);
    t.is(res.body.code, 9);
    t.is(res.body.details[1].violations[0].type, 'BUILT_IN_ROLE');
  }
  t.is((await s.admin.get(`${R}/${uid}`)).body.description, 'Owner Role (built-in)');
  t.is((await s.admin.delete(`${R}/${'e'.repeat(40)}`)).status, 404);
});

test('roles: custom roles keep capabilities deduplicated in catalogue order', async (t) => {
  const res = await s.admin.post(`${R}/${org}`, {
    name: 'pullers',
    description: 'Pull only',
    capabilities: ['repo.list', 'groups.list', 'repo.list'],
  });
  t.is(res.status, 200);
  t.regex(res.body.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
  t.deepEqual(res.body.capabilities, ['groups.list', 'repo.list']);
  t.deepEqual(Object.keys(res.body).sort(), [
    'capabilities',
    'createTime',
    'description',
    'name',
    'uid',
    'updateTime',
  ]);
  t.deepEqual((await s.admin.get(`${R}/${res.body.uid}`)).body, res.body);
});

test('roles: capability and name errors name their field', async (t) => {
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [{}, ['name', 'capabilities']],
    [{ name: 'x', capabilities: [] }, ['capabilities']],
    [{ name: 'x', capabilities: ['groups.list', 'groups.fly'] }, ['capabilities']],
    [{ name: 'x', capabilities: [7] }, ['capabilities']],
    [{ name: 'x', capabilities: 'groups.list' }, ['capabilities']],
    [{ name: 'X', capabilities: ['groups.list'] }, ['name']],
  ];
  for (const [body, want] of cases) {
    const res = await s.admin.post(`${R}/${org}`, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.deepEqual(fields(res.body).sort(), [...want].sort(), JSON.stringify(body));
  }
  const unknown = await s.admin.post(`${R}/${org}`, { name: 'x', capabilities: ['groups.fly'] });
  t.deepEqual(violations(unknown.body), ['capabilities: unknown capabilities: "groups.fly"']);
  t.is(
    (await s.admin.post(`${R}/${'0'.repeat(40)}`, { name: 'x', capabilities: ['groups.list'] }))
      .status,
    404,
  );
});

test('roles: update by mask, and capabilities cannot be emptied', async (t) => {
  const uid = await createRole(s.admin, org, 'mutable', ['groups.list']);
  const res = await s.admin.patch(`${R}/${uid}?updateMask=capabilities`, {
    name: 'ignored',
    capabilities: ['tag.list', 'groups.list'],
  });
  t.is(res.status, 200);
  t.is(res.body.name, 'mutable');
  t.deepEqual(res.body.capabilities, ['groups.list', 'tag.list']);
  const emptied = await s.admin.patch(`${R}/${uid}?updateMask=capabilities`, {});
  t.deepEqual(fields(emptied.body), ['capabilities']);
  const desc = await s.admin.patch(`${R}/${uid}`, { description: 'now described' });
  t.like(desc.body, { description: 'now described', capabilities: ['groups.list', 'tag.list'] });
  t.deepEqual(fields((await s.admin.patch(`${R}/${uid}?updateMask=uid`, {})).body), [
    'update_mask',
  ]);
});

test('roles: a bound role cannot be deleted until its bindings go', async (t) => {
  const role = await createRole(s.admin, org, 'bound', ['groups.list']);
  const identity = await createIdentity(s.admin, org, 'holder');
  const binding = await createBinding(s.admin, org, identity, role);
  const res = await s.admin.delete(`${R}/${role}`);
  t.is(res.status, 400);
  t.is(res.body.code, 9);
  t.is(res.body.details[1].violations[0].type, 'RESOURCE_IN_USE');
  t.is((await s.admin.get(`${R}/${role}`)).status, 200);
  await s.admin.delete(`/iam/v2beta1/roleBindings/${binding}`);
  t.is((await s.admin.delete(`${R}/${role}`)).status, 200);
  t.is((await s.admin.get(`${R}/${role}`)).status, 404);
});

test('roles: a group defining a role cannot be deleted', async (t) => {
  const g = await createGroup(s.admin, 'role-home', org);
  const role = await createRole(s.admin, g, 'resident', ['groups.list']);
  const res = await s.admin.delete(`/iam/v2beta1/groups/${g}`);
  t.is(res.body.message, 'Precondition failed: cannot delete group with child roles');
  await s.admin.delete(`${R}/${role}`);
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${g}`)).status, 200);
});

test('roles: list contract over custom roles (children_of, order, paging, skip)', async (t) => {
  const g = await createGroup(s.admin, 'many-roles', org);
  const names = Array.from({ length: 7 }, (_, i) => `r-${(i * 3) % 7}`);
  for (const n of names) await createRole(s.admin, g, n, ['groups.list']);
  const q = `${R}?uidp.children_of=${g}&page_size=3&order_by=name`;
  const pages = await allPages<Role>(s.admin, q, 'roles');
  t.deepEqual(
    pages.map((p) => p.length),
    [3, 3, 1],
  );
  t.deepEqual(
    pages.flat().map((r) => r.name),
    [...names].sort(),
  );
  const created = await s.admin.get(`${R}?uidp.children_of=${g}&order_by=created_at%20desc`);
  t.deepEqual(
    created.body.roles.map((r: Role) => r.name),
    [...names].reverse(),
  );
  const skipped = await s.admin.get(`${q}&skip=5`);
  t.is(skipped.body.skipped, 5);
  t.is(skipped.body.totalCount, '7');
  t.is(skipped.body.roles.length, 2);
  const below = await s.admin.get(`${R}?uidp.descendants_of=${org}&name=r-0`);
  t.is(below.body.totalCount, '1');
});

test('roles: an identity sees custom roles only where it holds roles.list', async (t) => {
  const a = await createGroup(s.admin, 'vis-a', org);
  const b = await createGroup(s.admin, 'vis-b', org);
  await createRole(s.admin, a, 'in-a', ['groups.list']);
  await createRole(s.admin, b, 'in-b', ['groups.list']);
  const who = await createIdentity(s.admin, org, 'looker');
  await createBinding(s.admin, a, who, builtinRole('viewer').uid);
  const names = (await s.arbor.services.roles.list(asIdentity(who), listAll)).items.map(
    (r) => r.name,
  );
  t.true(names.includes('in-a'));
  t.false(names.includes('in-b'));
  t.true(names.includes('owner'));
  const hidden = await s.arbor.services.roles
    .get(asIdentity(who), (await s.admin.get(`${R}?name=in-b`)).body.roles[0].uid)
    .catch((e: { code: number }) => e.code);
  t.is(hidden, 5);
});

test('roles v1: items with id/createdAt, create and replace', async (t) => {
  const list = await s.admin.get(`/iam/v1/roles?name=viewer`);
  t.deepEqual(Object.keys(list.body), ['items']);
  t.like(list.body.items[0], { id: builtinRole('viewer').uid, name: 'viewer' });
  t.truthy(list.body.items[0].createdAt);
  const made = await s.admin.post(`/iam/v1/roles/${org}`, {
    name: 'v1-role',
    description: 'x',
    capabilities: ['groups.list'],
  });
  t.is(made.status, 200);
  const replaced = await s.admin.put(`/iam/v1/roles/${made.body.id}`, {
    name: 'v1-role',
    capabilities: ['repo.list'],
  });
  t.like(replaced.body, { description: '', capabilities: ['repo.list'] });
});
