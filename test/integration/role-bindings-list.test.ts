import test from 'ava';
import { builtinRole } from '../../src/resources/roles/builtin-roles.js';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, fields } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let org: string;
let folders: string[];
let alice: string;
let bob: string;
const B = '/iam/v2beta1/roleBindings';
const viewer = builtinRole('viewer').uid;
const editor = builtinRole('editor').uid;
type Binding = {
  uid: string;
  createTime: string;
  identity: { uid: string };
  group: { uid: string };
  role: { uid: string };
};

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'rbl-org');
  folders = [];
  for (let i = 0; i < 4; i++) folders.push(await createGroup(s.admin, `f${i}`, org));
  alice = await createIdentity(s.admin, org, 'alice');
  bob = await createIdentity(s.admin, org, 'bob');
  // alice: viewer in every folder (4); bob: viewer and editor in every folder (8).
  for (const f of folders) {
    await createBinding(s.admin, f, alice, viewer);
    await createBinding(s.admin, f, bob, viewer);
    await createBinding(s.admin, f, bob, editor);
  }
});
test.after.always(async () => {
  await s?.close();
});

test('role bindings list: filters by identity, group and role, alone and together', async (t) => {
  const count = async (q: string) => (await s.admin.get(`${B}?${q}`)).body.totalCount;
  t.is(await count(`identity=${alice}`), '4');
  t.is(await count(`identity=${bob}`), '8');
  t.is(await count(`group=${folders[0]}`), '3');
  t.is(await count(`role=${editor}`), '4');
  t.is(await count(`identity=${bob}&role=${viewer}&group=${folders[2]}`), '1');
  t.is(await count(`uidp.descendants_of=${org}`), '12');
  t.is(await count(`uidp.children_of=${folders[1]}`), '3');
  const res = await s.admin.get(`${B}?group=${folders[3]}&role=${editor}`);
  t.like(res.body.roleBindings[0], {
    identity: { uid: bob, name: 'bob' },
    group: { uid: folders[3], name: 'f3' },
    role: { uid: editor, name: 'editor' },
  });
});

test('role bindings list: created_at order across pages, both ways, with skip', async (t) => {
  const q = `${B}?uidp.descendants_of=${org}&page_size=5&order_by=created_at`;
  const asc = await allPages<Binding>(s.admin, q, 'roleBindings');
  t.deepEqual(
    asc.map((p) => p.length),
    [5, 5, 2],
  );
  const flat = asc.flat();
  for (let i = 1; i < flat.length; i++) {
    const [a, b] = [flat[i - 1]!, flat[i]!];
    t.true(a.createTime < b.createTime || (a.createTime === b.createTime && a.uid < b.uid));
  }
  const desc = await allPages<Binding>(s.admin, `${q}%20desc`, 'roleBindings');
  t.deepEqual(
    desc.flat().map((b) => b.uid),
    flat.map((b) => b.uid).reverse(),
  );
  const skipped = await s.admin.get(`${q}&skip=10`);
  t.is(skipped.body.skipped, 10);
  t.is(skipped.body.totalCount, '12');
  t.deepEqual(
    skipped.body.roleBindings.map((b: Binding) => b.uid),
    flat.slice(10).map((b) => b.uid),
  );
});

test('role bindings list: default order is by uid', async (t) => {
  const all = (await allPages<Binding>(s.admin, `${B}?page_size=7`, 'roleBindings')).flat();
  const got = all.map((b) => b.uid);
  t.deepEqual(got, [...got].sort());
});

test('role bindings list: unknown filters, bad uids and other orders are refused', async (t) => {
  const cases: Array<[string, string]> = [
    ['identity=nope', 'identity'],
    ['group=nope', 'group'],
    ['role=nope', 'role'],
    ['name=x', 'name'],
    ['order_by=name', 'order_by'],
  ];
  for (const [q, field] of cases) {
    const res = await s.admin.get(`${B}?${q}`);
    t.is(res.status, 400, q);
    t.deepEqual(fields(res.body), [field], q);
  }
});
