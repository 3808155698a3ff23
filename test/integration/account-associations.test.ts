import test from 'ava';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole, fields } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const A = '/iam/v2beta1/accountAssociations';
const TENANT = '0f8fad5b-d9cb-469f-a165-70867728950e';
const CLIENT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

let s: TestServer;
let org: string;

const violations = (body: any) => fields(body).sort();

async function associate(group: string, name: string, extra: Record<string, unknown> = {}) {
  const res = await s.admin.post(`${A}/${group}`, { name, ...extra });
  if (res.status !== 200) throw new Error(`associate ${name}: ${JSON.stringify(res.body)}`);
  return res.body as { uid: string; name: string; createTime: string; updateTime: string };
}

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'aa-org');
});
test.after.always(async () => {
  await s?.close();
});

test('aa: create uses the group uid and answers the clouds given', async (t) => {
  const g = await createGroup(s.admin, 'aa-create', org);
  const res = await s.admin.post(`${A}/${g}`, {
    name: 'clouds',
    description: 'all three',
    amazon: { account: '123456789012' },
    google: { projectId: 'my-project-1', projectNumber: '1234567890' },
    azure: { tenantId: TENANT, clientIds: { ingester: CLIENT } },
  });
  t.is(res.status, 200);
  t.is(res.body.uid, g);
  t.deepEqual(res.body.amazon, { account: '123456789012' });
  t.deepEqual(res.body.google, { projectId: 'my-project-1', projectNumber: '1234567890' });
  t.deepEqual(res.body.azure, { tenantId: TENANT, clientIds: { ingester: CLIENT } });
  t.is(res.body.createTime, res.body.updateTime);
  t.deepEqual((await s.admin.get(`${A}/${g}`)).body, res.body);

  const bare = await associate(await createGroup(s.admin, 'aa-bare', org), 'bare');
  t.deepEqual(Object.keys(bare).sort(), ['createTime', 'description', 'name', 'uid', 'updateTime']);
});

test('aa: one association per group', async (t) => {
  const g = await createGroup(s.admin, 'aa-once', org);
  await associate(g, 'first');
  const again = await s.admin.post(`${A}/${g}`, { name: 'second' });
  t.is(again.status, 409);
  t.is(again.body.code, 6);
  t.is((await s.admin.get(`${A}/${g}`)).body.name, 'first');
});

test('aa: every invalid field is named', async (t) => {
  const empty = await s.admin.post(`${A}/${org}`, {});
  t.deepEqual(violations(empty.body), ['name']);
  const bad = await s.admin.post(`${A}/${org}`, {
    name: 'bad',
    amazon: { account: '1234' },
    google: {},
    azure: { tenantId: 'not-a-uuid', clientIds: { ingester: 'nope' } },
    aws: {},
  });
  t.is(bad.status, 400);
  t.deepEqual(violations(bad.body), [
    'amazon.account',
    'aws',
    'azure.clientIds.ingester',
    'azure.tenantId',
    'google.projectId',
  ]);
  const badGoogle = await s.admin.post(`${A}/${org}`, {
    name: 'bad',
    google: { projectId: 'UPPER', projectNumber: 'x1' },
  });
  t.deepEqual(violations(badGoogle.body), ['google.projectId', 'google.projectNumber']);
  t.is((await s.admin.post(`${A}/${'8'.repeat(40)}`, { name: 'x' })).status, 404);
  t.is((await s.admin.get(`${A}/${'8'.repeat(40)}`)).status, 404);
});

test('aa: update with and without a mask; null clears a cloud', async (t) => {
  const g = await createGroup(s.admin, 'aa-update', org);
  await associate(g, 'upd', { amazon: { account: '111111111111' } });
  const noMask = await s.admin.patch(`${A}/${g}`, { google: { projectNumber: '42' } });
  t.is(noMask.status, 200);
  t.deepEqual(noMask.body.amazon, { account: '111111111111' });
  t.deepEqual(noMask.body.google, { projectNumber: '42' });
  const masked = await s.admin.patch(`${A}/${g}?updateMask=amazon,description`, {
    name: 'ignored',
    description: 'masked',
  });
  t.is(masked.body.name, 'upd');
  t.is(masked.body.description, 'masked');
  t.is(masked.body.amazon, undefined);
  t.deepEqual(masked.body.google, { projectNumber: '42' });
  const cleared = await s.admin.patch(`${A}/${g}`, { google: null });
  t.is(cleared.body.google, undefined);
  const bad = await s.admin.patch(`${A}/${g}?updateMask=uid`, {});
  t.deepEqual(violations(bad.body), ['update_mask']);
  const invalid = await s.admin.patch(`${A}/${g}`, { azure: { clientIds: {} } });
  t.deepEqual(violations(invalid.body), ['azure.tenantId']);
  t.true(Date.parse(cleared.body.updateTime) >= Date.parse(noMask.body.updateTime));
  t.is((await s.admin.patch(`${A}/${org}/${'3'.repeat(16)}`, { name: 'x' })).status, 404);
});

test('aa: deleting one already gone is NOT_FOUND and a group with an association cannot be deleted', async (t) => {
  const g = await createGroup(s.admin, 'aa-delete', org);
  await associate(g, 'doomed');
  const blocked = await s.admin.delete(`/iam/v2beta1/groups/${g}`);
  t.is(blocked.status, 400);
  t.is(blocked.body.code, 9);
  t.is(blocked.body.details[1].violations[0].type, 'RESOURCE_NOT_EMPTY');
  t.is(
    blocked.body.message,
    'Precondition failed: cannot delete group with child account associations',
  );
  t.deepEqual((await s.admin.delete(`${A}/${g}`)).body, {});
  t.is((await s.admin.delete(`${A}/${g}`)).status, 404);
  t.is((await s.admin.get(`${A}/${g}`)).status, 404);
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${g}`)).status, 200);
});

test('aa: children_of and descendants_of are about the groups below, not the group itself', async (t) => {
  const top = await createGroup(s.admin, 'aa-tree', org);
  const kids: string[] = [];
  for (const name of ['k-c', 'k-a', 'k-b']) kids.push(await createGroup(s.admin, name, top));
  const grandchild = await createGroup(s.admin, 'k-deep', kids[0]);
  await associate(top, 'top');
  for (const [i, k] of kids.entries()) await associate(k, `kid-${'cab'[i]}`);
  await associate(grandchild, 'deep');

  const children = await s.admin.get(`${A}?uidp.children_of=${top}`);
  t.deepEqual(
    children.body.accountAssociations.map((a: any) => a.uid),
    [...kids].sort(),
  );
  t.is(children.body.totalCount, '3');
  const below = await s.admin.get(`${A}?uidp.descendants_of=${top}`);
  t.is(below.body.totalCount, '4');
  t.false(below.body.accountAssociations.some((a: any) => a.uid === top));

  const byName = await allPages<{ name: string }>(
    s.admin,
    `${A}?uidp.descendants_of=${top}&order_by=name%20desc&page_size=3`,
    'accountAssociations',
  );
  t.deepEqual(
    byName.map((p) => p.length),
    [3, 1],
  );
  t.deepEqual(
    byName.flat().map((a) => a.name),
    ['kid-c', 'kid-b', 'kid-a', 'deep'],
  );
  const byGroup = await s.admin.get(`${A}?uidp.descendants_of=${top}&order_by=group%20desc`);
  const uids = byGroup.body.accountAssociations.map((a: any) => a.uid);
  t.deepEqual(uids, [...uids].sort().reverse());
  const skipped = await s.admin.get(`${A}?uidp.descendants_of=${top}&skip=2&page_size=1`);
  t.is(skipped.body.skipped, 2);
  t.is(skipped.body.accountAssociations.length, 1);
  t.truthy(skipped.body.nextPageToken);
  const one = await s.admin.get(`${A}?group=${kids[1]}`);
  t.deepEqual(
    one.body.accountAssociations.map((a: any) => a.name),
    ['kid-a'],
  );
  const named = await s.admin.get(`${A}?name=deep`);
  t.deepEqual(
    named.body.accountAssociations.map((a: any) => a.uid),
    [grandchild],
  );
  t.deepEqual(violations((await s.admin.get(`${A}?order_by=amazon`)).body), ['order_by']);
});

test('aa: v1 speaks group, takes PUT as replacement and filters by group', async (t) => {
  const g = await createGroup(s.admin, 'aa-v1', org);
  const created = await s.admin.post(`/iam/v1/account_associations/${g}`, {
    group: g,
    name: 'v1',
    description: 'old',
    amazon: { account: '222222222222' },
  });
  t.is(created.status, 200);
  t.deepEqual(created.body, {
    group: g,
    name: 'v1',
    description: 'old',
    amazon: { account: '222222222222' },
  });
  const put = await s.admin.put(`/iam/v1/account_associations/${g}`, { group: g, name: 'v1' });
  t.deepEqual(put.body, { group: g, name: 'v1', description: '' });
  const listed = await s.admin.get(`/iam/v1/account_associations?group=${g}`);
  t.deepEqual(listed.body, { items: [{ group: g, name: 'v1', description: '' }] });
  t.is((await s.admin.delete(`/iam/v1/account_associations/${g}`)).status, 200);
  t.deepEqual((await s.admin.get(`/iam/v1/account_associations?group=${g}`)).body, { items: [] });
});

test('aa: access is decided at the group itself', async (t) => {
  const seen = await createGroup(s.admin, 'aa-seen', org);
  const unseen = await createGroup(s.admin, 'aa-unseen', org);
  await associate(seen, 'seen');
  await associate(unseen, 'unseen');
  const id = await createIdentity(s.admin, org, 'aa-reader');
  const role = await createRole(s.admin, org, 'aa-reader', [
    'groups.list',
    'account_associations.list',
  ]);
  await createBinding(s.admin, seen, id, role);
  const reader = s.client(
    (await s.arbor.tokens.sign(id, { iss: 'https://test.invalid', sub: id })).token,
  );
  t.is((await reader.get(`${A}/${seen}`)).status, 200);
  t.is((await reader.get(`${A}/${unseen}`)).status, 404);
  const listed = await reader.get(A);
  t.deepEqual(
    listed.body.accountAssociations.map((a: any) => a.uid),
    [seen],
  );
  const update = await reader.patch(`${A}/${seen}`, { description: 'x' });
  t.is(update.status, 403);
  t.is((await reader.delete(`${A}/${seen}`)).status, 403);
  t.is((await reader.delete(`${A}/${unseen}`)).status, 404);
});
