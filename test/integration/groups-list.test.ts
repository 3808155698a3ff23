import test from 'ava';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let org: string;
let other: string;
const names: string[] = [];
const G = '/iam/v2beta1/groups';
type Group = { uid: string; name: string; createTime: string };

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'list-org');
  other = await createGroup(s.admin, 'list-org-2');
  // 120 children with names that do not follow creation order, so the orders differ.
  for (let i = 0; i < 120; i++) {
    const name = `child-${String((i * 37) % 120).padStart(3, '0')}`;
    names.push(name);
    await createGroup(s.admin, name, org);
  }
  const first = (await s.admin.get(`${G}?uidp.children_of=${org}&page_size=1&order_by=name`)).body
    .groups[0];
  await createGroup(s.admin, 'grandchild', first.uid);
  await createGroup(s.admin, 'elsewhere', other);
});
test.after.always(async () => {
  await s?.close();
});

const uids = (pages: Group[][]) => pages.flat().map((g) => g.uid);

test('list: 120 children page 50/50/20 in name order, and back in reverse', async (t) => {
  const asc = await allPages<Group>(
    s.admin,
    `${G}?uidp.children_of=${org}&order_by=name`,
    'groups',
  );
  t.deepEqual(
    asc.map((p) => p.length),
    [50, 50, 20],
  );
  const ascNames = asc.flat().map((g) => g.name);
  t.deepEqual(ascNames, [...names].sort());
  const desc = await allPages<Group>(
    s.admin,
    `${G}?uidp.children_of=${org}&order_by=name%20desc`,
    'groups',
  );
  t.deepEqual(
    desc.map((p) => p.length),
    [50, 50, 20],
  );
  t.deepEqual(uids(desc), [...uids(asc)].reverse());
});

test('list: created_at order is stable across pages in both directions', async (t) => {
  const asc = await allPages<Group>(
    s.admin,
    `${G}?uidp.children_of=${org}&order_by=created_at&page_size=7`,
    'groups',
  );
  const flat = asc.flat();
  t.is(flat.length, 120);
  t.is(new Set(flat.map((g) => g.uid)).size, 120);
  for (let i = 1; i < flat.length; i++) {
    const a = flat[i - 1]!;
    const b = flat[i]!;
    t.true(a.createTime < b.createTime || (a.createTime === b.createTime && a.uid < b.uid));
  }
  const desc = await allPages<Group>(
    s.admin,
    `${G}?uidp.children_of=${org}&order_by=created_at%20desc&page_size=7`,
    'groups',
  );
  t.deepEqual(uids(desc), [...uids(asc)].reverse());
});

test('list: default order is by uid', async (t) => {
  const pages = await allPages<Group>(s.admin, `${G}?uidp.children_of=${org}`, 'groups');
  const all = uids(pages);
  t.deepEqual(all, [...all].sort());
});

test('list: totalCount is a decimal string on every page and nextPageToken is absent at the end', async (t) => {
  let res = await s.admin.get(`${G}?uidp.children_of=${org}`);
  t.is(res.body.totalCount, '120');
  t.is(res.body.skipped, 0);
  t.truthy(res.body.nextPageToken);
  res = await s.admin.get(
    `${G}?uidp.children_of=${org}&page_token=${encodeURIComponent(res.body.nextPageToken)}`,
  );
  t.is(res.body.totalCount, '120');
  res = await s.admin.get(`${G}?uidp.children_of=${org}&page_size=200`);
  t.is(res.body.groups.length, 120);
  t.false('nextPageToken' in res.body);
});

test('list: descendants_of is strictly below and reaches every depth', async (t) => {
  const res = await s.admin.get(`${G}?uidp.descendants_of=${org}&page_size=200`);
  t.is(res.body.totalCount, '121');
  t.false(res.body.groups.some((g: Group) => g.uid === org));
  t.true(res.body.groups.some((g: Group) => g.name === 'grandchild'));
  t.false(res.body.groups.some((g: Group) => g.name === 'elsewhere'));
});

test('list: children_of is direct children only', async (t) => {
  const res = await s.admin.get(`${G}?uidp.children_of=${org}&page_size=200`);
  t.is(res.body.totalCount, '120');
  t.false(res.body.groups.some((g: Group) => g.name === 'grandchild'));
});

test('list: name filters on exact match only', async (t) => {
  const exact = await s.admin.get(`${G}?uidp.descendants_of=${org}&name=child-005`);
  t.deepEqual(
    exact.body.groups.map((g: Group) => g.name),
    ['child-005'],
  );
  t.is(exact.body.totalCount, '1');
  const partial = await s.admin.get(`${G}?uidp.descendants_of=${org}&name=child`);
  t.deepEqual(partial.body.groups, []);
  t.is(partial.body.totalCount, '0');
});

test('list: skip starts later and is echoed; a short tail gives a short page', async (t) => {
  const all = uids(
    await allPages<Group>(s.admin, `${G}?uidp.children_of=${org}&order_by=name`, 'groups'),
  );
  const res = await s.admin.get(`${G}?uidp.children_of=${org}&order_by=name&skip=10&page_size=5`);
  t.is(res.body.skipped, 10);
  t.deepEqual(
    res.body.groups.map((g: Group) => g.uid),
    all.slice(10, 15),
  );
  const tail = await s.admin.get(`${G}?uidp.children_of=${org}&order_by=name&skip=117&page_size=5`);
  t.deepEqual(
    tail.body.groups.map((g: Group) => g.uid),
    all.slice(117),
  );
  t.false('nextPageToken' in tail.body);
  const past = await s.admin.get(`${G}?uidp.children_of=${org}&skip=500`);
  t.deepEqual(past.body.groups, []);
  t.is(past.body.skipped, 500);
});

test('list: skip combines with a page token, counted from the cursor', async (t) => {
  const all = uids(
    await allPages<Group>(s.admin, `${G}?uidp.children_of=${org}&order_by=name`, 'groups'),
  );
  const first = await s.admin.get(`${G}?uidp.children_of=${org}&order_by=name&page_size=10`);
  const res = await s.admin.get(
    `${G}?uidp.children_of=${org}&order_by=name&page_size=10&skip=5&page_token=${encodeURIComponent(first.body.nextPageToken)}`,
  );
  t.deepEqual(
    res.body.groups.map((g: Group) => g.uid),
    all.slice(15, 25),
  );
});

test('list: page_size above 200 is coerced; negative is INVALID_ARGUMENT', async (t) => {
  const big = await s.admin.get(`${G}?uidp.descendants_of=${org}&page_size=1000`);
  t.is(big.status, 200);
  t.is(big.body.groups.length, 121);
  const neg = await s.admin.get(`${G}?page_size=-5`);
  t.is(neg.status, 400);
  t.is(neg.body.details[1].fieldViolations[0].field, 'page_size');
});

test('list: a page token cannot be moved to another query or forged', async (t) => {
  const first = await s.admin.get(`${G}?uidp.children_of=${org}&order_by=name&page_size=10`);
  const token = encodeURIComponent(first.body.nextPageToken);
  const otherOrder = await s.admin.get(
    `${G}?uidp.children_of=${org}&order_by=created_at&page_token=${token}`,
  );
  t.is(otherOrder.status, 400);
  t.is(otherOrder.body.details[1].fieldViolations[0].field, 'page_token');
  const otherFilter = await s.admin.get(
    `${G}?uidp.children_of=${other}&order_by=name&page_token=${token}`,
  );
  t.is(otherFilter.status, 400);
  const forged = await s.admin.get(
    `${G}?uidp.children_of=${org}&order_by=name&page_token=${token.slice(0, -4)}AAAA`,
  );
  t.is(forged.status, 400);
  // A different page_size is allowed between pages.
  const resized = await s.admin.get(
    `${G}?uidp.children_of=${org}&order_by=name&page_size=3&page_token=${token}`,
  );
  t.is(resized.status, 200);
  t.is(resized.body.groups.length, 3);
});

test('list: bad filters and orderings are INVALID_ARGUMENT with the field named', async (t) => {
  const cases: Array<[string, string]> = [
    ['order_by=password', 'order_by'],
    ['order_by=name%20up', 'order_by'],
    ['uidp.descendants_of=abc', 'uidp.descendants_of'],
    ['skip=x', 'skip'],
    ['colour=red', 'colour'],
  ];
  for (const [q, field] of cases) {
    const res = await s.admin.get(`${G}?${q}`);
    t.is(res.status, 400, q);
    t.is(res.body.details[1].fieldViolations[0].field, field, q);
  }
});
