import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import {
  ISSUER,
  createBinding,
  createIdentity,
  createRole,
  fields,
} from '../helpers/iam-fixtures.js';

/**
 * `top_level` on the group list (the console tree's top level): the topmost groups the
 * caller may list, never a group above them. A caller who sees a folder but not its
 * organization is answered the folder, and nothing about the organization leaks (not in
 * the page, not in the count). Page tokens stay bound to the query. Both doors.
 */
let s: GrpcTestServer;
let acme: string;
let globex: string;
let payments: string;
let ledger: string;
let ops: string;
let reader: string;
let nobody: string;

const names = (body: any): string[] =>
  (body.groups as Array<{ name: string }>).map((x) => x.name).sort();

test.before(async () => {
  s = await startGrpcServer();
  acme = await createGroup(s.admin, 'tl-acme');
  globex = await createGroup(s.admin, 'tl-globex');
  payments = await createGroup(s.admin, 'payments', acme);
  ledger = await createGroup(s.admin, 'ledger', payments);
  await createGroup(s.admin, 'cards', payments);
  await createGroup(s.admin, 'secret', acme);
  await createGroup(s.admin, 'hr', globex);
  ops = await createGroup(s.admin, 'ops', acme);
  // The reader (an identity of acme) lists groups at acme/payments, again at
  // acme/payments/ledger (nested: one top, not two) and at acme/ops; never at acme itself.
  reader = await createIdentity(s.admin, acme, 'reader');
  const lister = await createRole(s.admin, acme, 'lister', ['groups.list']);
  await createBinding(s.admin, payments, reader, lister);
  await createBinding(s.admin, ledger, reader, lister);
  await createBinding(s.admin, ops, reader, lister);
  nobody = await createIdentity(s.admin, globex, 'nobody');
});
test.after.always(async () => {
  await s?.close();
});

const tokenFor = async (uid: string) =>
  (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${uid}` })).token;

test('REST: the admin token is answered the organizations, and false is the rest', async (t) => {
  const top = await s.admin.get('/iam/v2beta1/groups?top_level=true&page_size=200');
  t.is(top.status, 200, JSON.stringify(top.body));
  t.true(names(top.body).includes('tl-acme'));
  t.true(
    (top.body.groups as Array<{ uid: string }>).every((g) => !g.uid.includes('/')),
    'organizations only',
  );
  t.is(top.body.totalCount, String(top.body.groups.length));
  const camel = await s.admin.get('/iam/v2beta1/groups?topLevel=true&page_size=200');
  t.deepEqual(names(camel.body), names(top.body));
  const rest = await s.admin.get(
    `/iam/v2beta1/groups?top_level=false&uidp.descendants_of=${acme}&order_by=name`,
  );
  t.deepEqual(names(rest.body), ['cards', 'ledger', 'ops', 'payments', 'secret']);
  // Below an anchor nothing is an organization.
  const below = await s.admin.get(`/iam/v2beta1/groups?top_level=true&uidp.children_of=${acme}`);
  t.deepEqual(names(below.body), []);
  t.is(below.body.totalCount, '0');
});

test('REST: a caller who sees a folder but not its organization gets the folder, nothing above', async (t) => {
  const me = s.client(await tokenFor(reader));
  const top = await me.get('/iam/v2beta1/groups?top_level=true');
  t.is(top.status, 200, JSON.stringify(top.body));
  t.deepEqual(names(top.body), ['ops', 'payments']);
  t.is(top.body.totalCount, '2');
  t.false(JSON.stringify(top.body).includes(acme.slice(0, 40) + '"'), 'the organization not named');
  t.false(JSON.stringify(top.body).includes('tl-acme'));
  // And the organization stays unseen by its Get.
  t.is((await me.get(`/iam/v2beta1/groups/${acme}`)).status, 404);
  // The others are what it sees below its tops: never a sibling it cannot see (secret).
  const rest = await me.get('/iam/v2beta1/groups?top_level=false&order_by=name');
  t.deepEqual(names(rest.body), ['cards', 'ledger']);
  // Anchored at the organization it cannot see: the folder it can, still nothing else.
  const under = await me.get(`/iam/v2beta1/groups?top_level=true&uidp.descendants_of=${acme}`);
  t.deepEqual(names(under.body), ['ops', 'payments']);
  t.is(under.body.totalCount, '2');
  // Anchored inside its own scope: everything there has a parent it sees.
  const inside = await me.get(`/iam/v2beta1/groups?top_level=true&uidp.children_of=${payments}`);
  t.deepEqual(names(inside.body), []);
});

test('REST: a caller who may list no group gets none', async (t) => {
  const me = s.client(await tokenFor(nobody));
  const top = await me.get('/iam/v2beta1/groups?top_level=true');
  t.is(top.status, 200);
  t.deepEqual(names(top.body), []);
  t.is(top.body.totalCount, '0');
});

test('REST: page tokens stay bound to the filter; a bad value is INVALID_ARGUMENT', async (t) => {
  const me = s.client(await tokenFor(reader));
  const first = await me.get('/iam/v2beta1/groups?top_level=true&page_size=1&order_by=name');
  t.deepEqual(names(first.body), ['ops']);
  const token = first.body.nextPageToken as string;
  t.truthy(token);
  const second = await me.get(
    `/iam/v2beta1/groups?top_level=true&page_size=1&order_by=name&page_token=${token}`,
  );
  t.deepEqual(names(second.body), ['payments']);
  t.is(second.body.nextPageToken, undefined);
  t.is(second.body.totalCount, '2');
  for (const other of ['top_level=false&', '', 'name_prefix=p&top_level=true&']) {
    const replay = await me.get(
      `/iam/v2beta1/groups?${other}page_size=1&order_by=name&page_token=${token}`,
    );
    t.is(replay.status, 400, other);
    t.deepEqual(fields(replay.body), ['page_token']);
  }
  const bad = await me.get('/iam/v2beta1/groups?top_level=yes');
  t.is(bad.status, 400);
  t.deepEqual(fields(bad.body), ['top_level']);
  const twice = await me.get('/iam/v2beta1/groups?top_level=true&top_level=false');
  t.is(twice.status, 400);
});

test('gRPC: ListGroups takes the same filter', async (t) => {
  const caller = s.grpc(await tokenFor(reader));
  const top = await caller.call(GroupsService, 'ListGroups', { topLevel: true });
  if (!top.ok) return t.fail(top.message);
  t.deepEqual(names(top.json), ['ops', 'payments']);
  const rest = await caller.call(GroupsService, 'ListGroups', { topLevel: false });
  if (!rest.ok) return t.fail(rest.message);
  t.deepEqual(names(rest.json), ['cards', 'ledger']);
  caller.close();
});
