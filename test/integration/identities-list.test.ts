import test from 'ava';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { ISSUER, asIdentity, createIdentity, fields } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { ListRequest } from '../../src/core/list-request.js';

let s: TestServer;
let org: string;
let folder: string;
let other: string;
const names: string[] = [];
const I = '/iam/v2beta1/identities';
type Identity = { uid: string; name: string; createTime: string };

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'list-org');
  folder = await createGroup(s.admin, 'folder', org);
  other = await createGroup(s.admin, 'other-org');
  // Names out of creation order, so that name and created_at orders differ.
  for (let i = 0; i < 12; i++) {
    const name = `id-${String((i * 5) % 12).padStart(2, '0')}`;
    names.push(name);
    await createIdentity(s.admin, org, name);
  }
  await createIdentity(s.admin, folder, 'nested');
  await createIdentity(s.admin, other, 'id-00');
});
test.after.always(async () => {
  await s?.close();
});

const uids = (pages: Identity[][]) => pages.flat().map((i) => i.uid);

test('identities list: children_of pages in name order both ways', async (t) => {
  const q = `${I}?uidp.children_of=${org}&page_size=5&order_by=name`;
  const asc = await allPages<Identity>(s.admin, q, 'identities');
  t.deepEqual(
    asc.map((p) => p.length),
    [5, 5, 2],
  );
  t.deepEqual(
    asc.flat().map((i) => i.name),
    [...names].sort(),
  );
  const desc = await allPages<Identity>(s.admin, `${q}%20desc`, 'identities');
  t.deepEqual(uids(desc), [...uids(asc)].reverse());
});

test('identities list: created_at order, skip and totalCount', async (t) => {
  const all = await allPages<Identity>(
    s.admin,
    `${I}?uidp.children_of=${org}&order_by=created_at&page_size=200`,
    'identities',
  );
  t.deepEqual(
    all.flat().map((i) => i.name),
    names,
  );
  const res = await s.admin.get(
    `${I}?uidp.children_of=${org}&order_by=created_at&skip=10&page_size=5`,
  );
  t.is(res.body.skipped, 10);
  t.is(res.body.totalCount, '12');
  t.deepEqual(
    res.body.identities.map((i: Identity) => i.name),
    names.slice(10),
  );
  t.false('nextPageToken' in res.body);
});

test('identities list: descendants_of reaches folders; name filters exactly', async (t) => {
  const below = await s.admin.get(`${I}?uidp.descendants_of=${org}&page_size=200`);
  t.is(below.body.totalCount, '13');
  const byName = await s.admin.get(`${I}?name=id-00`);
  t.is(byName.body.totalCount, '2');
  const scoped = await s.admin.get(`${I}?uidp.descendants_of=${org}&name=id-00`);
  t.is(scoped.body.identities.length, 1);
  t.is((await s.admin.get(`${I}?name=id`)).body.totalCount, '0');
  t.deepEqual(fields((await s.admin.get(`${I}?order_by=subject`)).body), ['order_by']);
  t.deepEqual(fields((await s.admin.get(`${I}?issuer=x`)).body), ['issuer']);
});

test('identities list: an identity principal sees only what its bindings allow', async (t) => {
  const [first] = (await s.admin.get(`${I}?uidp.children_of=${org}&page_size=1`)).body.identities;
  const req: ListRequest = {
    pageSize: 50,
    orderBy: { field: 'uid', direction: 'asc' },
    skip: 0,
    uidp: {},
    filters: {},
  };
  const none = await s.arbor.services.identities.list(asIdentity(first.uid), req);
  t.is(none.totalCount, '0');
  const viewer = (await s.admin.get('/iam/v2beta1/roles?name=viewer')).body.roles[0].uid;
  await s.admin.post(`/iam/v2beta1/roleBindings/${folder}`, {
    identityUid: first.uid,
    roleUid: viewer,
  });
  const some = await s.arbor.services.identities.list(asIdentity(first.uid), req);
  t.deepEqual(
    some.items.map((i) => i.name),
    ['nested'],
  );
});

test('identities v1: items with id/createdAt, create and full replacement', async (t) => {
  const list = await s.admin.get(`/iam/v1/identities?uidp.children_of=${folder}`);
  t.is(list.status, 200);
  t.deepEqual(Object.keys(list.body), ['items']);
  t.like(list.body.items[0], { name: 'nested', claimMatch: { issuer: ISSUER } });
  t.truthy(list.body.items[0].id && list.body.items[0].createdAt && list.body.items[0].updatedAt);
  const v1Group = await createGroup(s.admin, 'v1-group', other);
  const created = await s.admin.post(`/iam/v1/identities/${v1Group}`, {
    name: 'v1-made',
    description: 'd',
    claimMatch: { issuer: ISSUER, subject: 'v1' },
  });
  t.is(created.status, 200);
  t.regex(created.body.id, new RegExp(`^${v1Group}/`));
  const replaced = await s.admin.put(`/iam/v1/identities/${created.body.id}`, {
    name: 'v1-renamed',
    claimMatch: { issuer: ISSUER, subject: 'v1' },
  });
  t.is(replaced.status, 200);
  t.is(replaced.body.description, '');
  t.is(replaced.body.name, 'v1-renamed');
  const one = await s.admin.get(`/iam/v1/identities?id=${created.body.id}`);
  t.is(one.body.items.length, 1);
  t.is((await s.admin.delete(`/iam/v1/identities/${created.body.id}`)).status, 200);
});
