import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

test('v1: groups list as items with id and createdAt', async (t) => {
  const org = await createGroup(s.admin, 'v1-org', undefined, 'described');
  const res = await s.admin.get('/iam/v1/groups');
  t.is(res.status, 200);
  t.false('groups' in res.body);
  const item = res.body.items.find((g: { id: string }) => g.id === org);
  t.like(item, {
    id: org,
    name: 'v1-org',
    description: 'described',
    verified: false,
    resourceLimits: {},
  });
  t.regex(item.createdAt, /Z$/);
  t.regex(item.updatedAt, /Z$/);
  t.false('uid' in item);
});

test('v1: lists are unpaginated and honour uidp and id filters', async (t) => {
  const org = await createGroup(s.admin, 'v1-many');
  for (let i = 0; i < 230; i++) await createGroup(s.admin, `f${i}`, org);
  const all = await s.admin.get(`/iam/v1/groups?uidp.children_of=${org}`);
  t.is(all.body.items.length, 230);
  t.false('nextPageToken' in all.body);
  const one = all.body.items[7].id as string;
  const byId = await s.admin.get(`/iam/v1/groups?id=${one}`);
  t.deepEqual(
    byId.body.items.map((g: { id: string }) => g.id),
    [one],
  );
  const none = await s.admin.get(`/iam/v1/groups?id=${'9'.repeat(40)}`);
  t.deepEqual(none.body.items, []);
});

test('v1: create, full-replacement update resets omitted fields, delete', async (t) => {
  const created = await s.admin.post('/iam/v1/groups', { name: 'v1-made', description: 'keep?' });
  t.is(created.status, 200);
  const id = created.body.id as string;
  const child = await s.admin.post(`/iam/v1/groups/${id}`, { name: 'v1-child' });
  t.regex(child.body.id, new RegExp(`^${id}/`));
  const updated = await s.admin.put(`/iam/v1/groups/${id}`, { id, name: 'v1-renamed' });
  t.is(updated.status, 200);
  t.is(updated.body.name, 'v1-renamed');
  t.is(updated.body.description, '');
  const patched = await s.admin.patch(`/iam/v1/groups/${id}`, {
    name: 'v1-again',
    description: 'd',
  });
  t.like(patched.body, { name: 'v1-again', description: 'd' });
  t.is((await s.admin.delete(`/iam/v1/groups/${child.body.id}`)).status, 200);
  t.is((await s.admin.delete(`/iam/v1/groups/${id}`)).status, 200);
  t.is((await s.admin.get(`/iam/v1/groups/${id}`)).status, 404);
});

test('v1 and v2 see the same group', async (t) => {
  const org = await createGroup(s.admin, 'both');
  const v1 = (await s.admin.get(`/iam/v1/groups/${org}`)).body;
  const v2 = (await s.admin.get(`/iam/v2beta1/groups/${org}`)).body;
  t.is(v1.id, v2.uid);
  t.is(v1.createdAt, v2.createTime);
});
