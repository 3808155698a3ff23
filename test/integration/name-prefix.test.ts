import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { IdentitiesService } from '../../src/gen/arbor/iam/v2beta1/identities_pb.js';
import { RolesService } from '../../src/gen/arbor/iam/v2beta1/roles_pb.js';
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
 * `name_prefix` on the group, identity and role lists (the console's type-ahead): beyond
 * the seed's exact `name` filter, the prefix taken literally (LIKE's `_` and `%` are plain
 * characters), through both doors, and never past what the caller may list.
 */
let s: GrpcTestServer;
let org: string;
let other: string;
let reader: string;

const names = (body: any, plural: string): string[] =>
  (body[plural] as Array<{ name: string }>).map((x) => x.name).sort();

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'pfx-org');
  other = await createGroup(s.admin, 'pfx-other');
  for (const n of ['team_a', 'teamxa', 'team', 'tea', 'staff']) await createGroup(s.admin, n, org);
  await createGroup(s.admin, 'team-hidden', other);
  for (const n of ['ann', 'anna', 'an_x', 'bob']) await createIdentity(s.admin, org, n);
  await createIdentity(s.admin, other, 'annex');
  await createRole(s.admin, org, 'viewer-local', ['groups.list']);
  await createRole(s.admin, other, 'viewer-hidden', ['groups.list']);
  reader = await createIdentity(s.admin, org, 'reader');
  const role = await createRole(s.admin, org, 'lister', [
    'groups.list',
    'identity.list',
    'roles.list',
  ]);
  await createBinding(s.admin, org, reader, role);
});
test.after.always(async () => {
  await s?.close();
});

const tokenFor = async (uid: string) =>
  (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${uid}` })).token;

test('REST: name_prefix matches names that start with the text, `_` and `%` literally', async (t) => {
  const g = (q: string) => s.admin.get(`/iam/v2beta1/groups?uidp.children_of=${org}&${q}`);
  t.deepEqual(names((await g('name_prefix=tea')).body, 'groups'), [
    'tea',
    'team',
    'team_a',
    'teamxa',
  ]);
  t.deepEqual(names((await g('name_prefix=team_')).body, 'groups'), ['team_a']);
  t.deepEqual(names((await g('name_prefix=%25')).body, 'groups'), []);
  t.deepEqual(names((await g('name_prefix=t%25')).body, 'groups'), []);
  t.deepEqual(names((await g('namePrefix=st')).body, 'groups'), ['staff']);
  // An empty prefix is no filter, as an empty exact filter is.
  t.is((await g('name_prefix=')).body.groups.length, 5);
  const ids = await s.admin.get(`/iam/v2beta1/identities?name_prefix=an_`);
  t.deepEqual(names(ids.body, 'identities'), ['an_x']);
  const ann = await s.admin.get(`/iam/v2beta1/identities?name_prefix=ann&order_by=name`);
  t.deepEqual(
    ann.body.identities.map((i: { name: string }) => i.name),
    ['ann', 'anna', 'annex'],
  );
  t.is(ann.body.totalCount, '3');
  const roles = await s.admin.get(`/iam/v2beta1/roles?name_prefix=viewer`);
  t.deepEqual(names(roles.body, 'roles'), ['viewer', 'viewer-hidden', 'viewer-local']);
});

test('REST: a prefix is checked like any filter', async (t) => {
  const bad = await s.admin.get(`/iam/v2beta1/groups?name_prefix=${'a'.repeat(1025)}`);
  t.is(bad.status, 400);
  t.deepEqual(fields(bad.body), ['name_prefix']);
  const twice = await s.admin.get(`/iam/v2beta1/roles?name_prefix=a&name_prefix=b`);
  t.is(twice.status, 400);
});

test('REST: a prefix never widens what the caller may list', async (t) => {
  const me = s.client(await tokenFor(reader));
  const groups = await me.get(`/iam/v2beta1/groups?name_prefix=team`);
  t.is(groups.status, 200, JSON.stringify(groups.body));
  t.deepEqual(names(groups.body, 'groups'), ['team', 'team_a', 'teamxa']);
  const ids = await me.get(`/iam/v2beta1/identities?name_prefix=ann`);
  t.deepEqual(names(ids.body, 'identities'), ['ann', 'anna']);
  // Built-in roles are everyone's to see; the other organization's role is not.
  const roles = await me.get(`/iam/v2beta1/roles?name_prefix=viewer`);
  t.deepEqual(names(roles.body, 'roles'), ['viewer', 'viewer-local']);
});

test('gRPC: the same filter on ListGroups, ListIdentities and ListRoles', async (t) => {
  const caller = s.grpc(await tokenFor(reader));
  const groups = await caller.call(GroupsService, 'ListGroups', { namePrefix: 'team' });
  if (!groups.ok) return t.fail(groups.message);
  t.deepEqual(names(groups.json, 'groups'), ['team', 'team_a', 'teamxa']);
  const ids = await caller.call(IdentitiesService, 'ListIdentities', { namePrefix: 'an_' });
  if (!ids.ok) return t.fail(ids.message);
  t.deepEqual(names(ids.json, 'identities'), ['an_x']);
  const roles = await caller.call(RolesService, 'ListRoles', { namePrefix: 'viewer' });
  if (!roles.ok) return t.fail(roles.message);
  t.deepEqual(names(roles.json, 'roles'), ['viewer', 'viewer-local']);
  caller.close();
});
