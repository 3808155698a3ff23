import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { must, startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

const G = '/iam/v2beta1/groups' as const;
type Group = {
  uid: string;
  name: string;
  description: string;
  createTime: string;
  updateTime: string;
};

test('groups: create a root and a child with server-owned fields', async (t) => {
  // The typed client: paths, bodies and answers as the OpenAPI document declares them.
  const root = await must(
    'root',
    s.api.POST(G, { body: { name: 'acme corp', description: 'Acme' } }),
  );
  t.regex(root.uid, /^[0-9a-f]{40}$/);
  t.is(root.verified, false);
  t.deepEqual(root.resourceLimits, {});
  t.regex(root.createTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.is(root.createTime, root.updateTime);

  const under = { params: { path: { uid: root.uid } } };
  const child = await must(
    'child',
    s.api.POST(`${G}/{uid}`, { ...under, body: { name: 'team-a' } }),
  );
  t.regex(child.uid, new RegExp(`^${root.uid}/[0-9a-f]{16}$`));
  t.is(child.description, '');

  const got = await s.api.GET(`${G}/{uid}`, { params: { path: { uid: child.uid } } });
  t.deepEqual(got.data, child);
  // The uid's slash travels as it is: the server saw the child's own path.
  t.is(new URL(got.response.url).pathname, `${G}/${child.uid}`);
});

test('groups: server-owned fields in the input are never taken', async (t) => {
  const res = await s.admin.post(G, {
    name: 'sneaky',
    uid: 'f'.repeat(40),
    verified: true,
    createTime: '2000-01-01T00:00:00.000Z',
    resourceLimits: { repositories: 1000 },
  });
  t.is(res.status, 200);
  t.not(res.body.uid, 'f'.repeat(40));
  t.false(res.body.verified);
  t.deepEqual(res.body.resourceLimits, {});
  t.not(res.body.createTime, '2000-01-01T00:00:00.000Z');
});

test('groups: an empty create body is INVALID_ARGUMENT naming name', async (t) => {
  const res = await s.admin.post(G, {});
  t.is(res.status, 400);
  t.is(res.body.code, 3);
  t.is(res.body.message, 'Invalid argument: name: name is required');
  t.like(res.body.details[0], {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'INVALID_ARGUMENT',
  });
  t.deepEqual(res.body.details[1].fieldViolations, [
    { field: 'name', description: 'name is required' },
  ]);
});

test('groups: a name outside the pattern is refused with the pattern in the message', async (t) => {
  for (const name of ['Upper', 'semi;colon', '', 'x'.repeat(64)]) {
    const res = await s.admin.post(G, { name });
    t.is(res.status, 400, name);
    t.is(res.body.details[1].fieldViolations[0].field, 'name');
  }
  const res = await s.admin.post(G, { name: 'Bad' });
  t.is(
    res.body.message,
    'Invalid argument: name: name must be lowercase letters a-z, digits, spaces, dots, dashes or underscores',
  );
});

test('groups: wrong types and unknown fields name each failed field', async (t) => {
  const res = await s.admin.post(G, { name: 42, description: ['x'], colour: 'red' });
  t.is(res.status, 400);
  const fields = res.body.details[1].fieldViolations.map((v: { field: string }) => v.field).sort();
  t.deepEqual(fields, ['colour', 'description', 'name']);
});

test('groups: a child of a missing parent is NOT_FOUND', async (t) => {
  const res = await s.admin.post(`${G}/${'0'.repeat(40)}`, { name: 'orphan' });
  t.is(res.status, 404);
  t.is(res.body.code, 5);
});

test('groups: get of an unknown or malformed uid', async (t) => {
  const missing = await s.admin.get(`${G}/${'1'.repeat(40)}`);
  t.is(missing.status, 404);
  t.like(missing.body.details[1], { '@type': 'type.googleapis.com/google.rpc.ResourceInfo' });
  const bad = await s.admin.get(`${G}/not-a-uid`);
  t.is(bad.status, 400);
  t.is(bad.body.details[1].fieldViolations[0].field, 'uid');
});

test('groups: update without a mask changes only the fields in the body', async (t) => {
  const uid = await createGroup(s.admin, 'patch-me', undefined, 'before');
  const before = (await s.admin.get(`${G}/${uid}`)).body as Group;
  await new Promise((r) => setTimeout(r, 5));
  const res = await s.admin.patch(`${G}/${uid}`, { description: 'after' });
  t.is(res.status, 200);
  t.is(res.body.name, 'patch-me');
  t.is(res.body.description, 'after');
  t.is(res.body.createTime, before.createTime);
  t.true(Date.parse(res.body.updateTime) > Date.parse(before.updateTime));
});

test('groups: update with updateMask ignores other body fields', async (t) => {
  const uid = await createGroup(s.admin, 'masked', undefined, 'before');
  const res = await s.admin.patch(`${G}/${uid}?updateMask=description`, {
    name: 'ignored',
    description: 'after',
  });
  t.is(res.status, 200);
  t.is(res.body.name, 'masked');
  t.is(res.body.description, 'after');
  const cleared = await s.admin.patch(`${G}/${uid}?update_mask=description`, {});
  t.is(cleared.body.description, '');
});

test('groups: update with * replaces every mutable field', async (t) => {
  const uid = await createGroup(s.admin, 'star', undefined, 'will go');
  const res = await s.admin.patch(`${G}/${uid}?updateMask=*`, { name: 'star2' });
  t.is(res.status, 200);
  t.is(res.body.name, 'star2');
  t.is(res.body.description, '');
});

test('groups: update masks naming unknown or immutable fields are refused', async (t) => {
  const uid = await createGroup(s.admin, 'immutable');
  for (const mask of ['uid', 'verified', 'nonsense', 'createTime']) {
    const res = await s.admin.patch(`${G}/${uid}?updateMask=${mask}`, {});
    t.is(res.status, 400, mask);
    t.is(res.body.details[1].fieldViolations[0].field, 'update_mask');
  }
  const invalid = await s.admin.patch(`${G}/${uid}`, { name: 'NOPE' });
  t.is(invalid.status, 400);
  const missing = await s.admin.patch(`${G}/${'2'.repeat(40)}`, { description: 'x' });
  t.is(missing.status, 404);
});

test('groups: renaming keeps descendant listings in step', async (t) => {
  const root = await createGroup(s.admin, 'rename-root');
  const child = await createGroup(s.admin, 'old-name', root);
  await s.admin.patch(`${G}/${child}`, { name: 'new-name' });
  const byName = await s.admin.get(`${G}?uidp.descendants_of=${root}&name=new-name`);
  t.deepEqual(
    byName.body.groups.map((g: Group) => g.uid),
    [child],
  );
  const old = await s.admin.get(`${G}?uidp.descendants_of=${root}&name=old-name`);
  t.deepEqual(old.body.groups, []);
});

test('groups: delete answers an empty body and the group is gone', async (t) => {
  const uid = await createGroup(s.admin, 'short-lived');
  const res = await s.admin.delete(`${G}/${uid}`);
  t.is(res.status, 200);
  t.deepEqual(res.body, {});
  t.is((await s.admin.get(`${G}/${uid}`)).status, 404);
  t.is((await s.admin.delete(`${G}/${uid}`)).status, 404);
});

test('groups: a group with children cannot be deleted (RESOURCE_NOT_EMPTY)', async (t) => {
  const root = await createGroup(s.admin, 'parent');
  const child = await createGroup(s.admin, 'child', root);
  const res = await s.admin.delete(`${G}/${root}`);
  t.is(res.status, 400);
  t.is(res.body.code, 9);
  t.is(res.body.message, 'Precondition failed: cannot delete group with child groups');
  t.like(res.body.details[0], { reason: 'FAILED_PRECONDITION' });
  t.is(res.body.details[1]['@type'], 'type.googleapis.com/google.rpc.PreconditionFailure');
  t.is(res.body.details[1].violations[0].type, 'RESOURCE_NOT_EMPTY');
  t.is((await s.admin.get(`${G}/${root}`)).status, 200);
  t.is((await s.admin.delete(`${G}/${child}`)).status, 200);
  t.is((await s.admin.delete(`${G}/${root}`)).status, 200);
});

test('groups: totalCount is counted on the first page and carried along its cursor chain', async (t) => {
  const org = await createGroup(s.admin, 'counted');
  for (let i = 0; i < 5; i++) await createGroup(s.admin, `c${i}`, org);
  // Both uidp filters at once: no maintained counter answers this, so it is counted.
  const q = `${G}?uidp.descendants_of=${org}&uidp.children_of=${org}&page_size=2`;
  const first = await s.admin.get(q);
  t.is(first.body.totalCount, '5');
  await createGroup(s.admin, 'late', org);
  const next = await s.admin.get(`${q}&page_token=${encodeURIComponent(first.body.nextPageToken)}`);
  t.is(next.body.totalCount, '5', 'the chain keeps the total of its first page');
  const fresh = await s.admin.get(q);
  t.is(fresh.body.totalCount, '6', 'a new query counts again');
});

test('groups: a maintained total is exact on every page of a chain', async (t) => {
  const org = await createGroup(s.admin, 'maintained');
  const team = await createGroup(s.admin, 'team', org);
  for (let i = 0; i < 4; i++) await createGroup(s.admin, `c${i}`, org);
  await createGroup(s.admin, 'deep', team);
  const children = `${G}?uidp.children_of=${org}&page_size=2`;
  const descendants = `${G}?uidp.descendants_of=${org}&page_size=2`;
  const first = await s.admin.get(children);
  t.is(first.body.totalCount, '5');
  t.is((await s.admin.get(descendants)).body.totalCount, '6');
  const late = await createGroup(s.admin, 'late', team);
  const next = await s.admin.get(
    `${children}&page_token=${encodeURIComponent(first.body.nextPageToken)}`,
  );
  t.is(next.body.totalCount, '5', 'a grandchild is not a child');
  t.is((await s.admin.get(descendants)).body.totalCount, '7');
  t.is((await s.admin.delete(`${G}/${late}`)).status, 200);
  t.is((await s.admin.get(descendants)).body.totalCount, '6', 'a delete is counted at once');
  t.is((await s.admin.get(`${G}?uidp.children_of=${late}`)).body.totalCount, '0');
});
