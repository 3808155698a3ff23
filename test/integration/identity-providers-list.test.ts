import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole, fields } from '../helpers/iam-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

const P = '/iam/v2beta1/identityProviders';
const viewer = builtinRoleUid('viewer');

let s: TestServer;
let org: string;
let orgRole: string;

const oidc = { issuer: 'https://accounts.example.com', clientId: 'c', clientSecret: 'shh' };

async function createIdp(group: string, name: string) {
  const res = await s.admin.post(`${P}/${group}`, { name, defaultRole: viewer, oidc });
  if (res.status !== 200) throw new Error(`idp ${name}: ${JSON.stringify(res.body)}`);
  return res.body as { uid: string; name: string; createTime: string };
}

/** A client holding a real API token of an identity bound to `capabilities` at the org. */
async function callerWith(name: string, capabilities: string[]): Promise<Client> {
  const id = await createIdentity(s.admin, org, name);
  await createBinding(s.admin, org, id, await createRole(s.admin, org, name, capabilities));
  return s.client((await s.arbor.tokens.sign(id, { iss: 'https://test.invalid', sub: id })).token);
}

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'idp-list-org');
  orgRole = await createRole(s.admin, org, 'org-role', ['groups.list']);
});
test.after.always(async () => {
  await s?.close();
});

test('idp list: filters, orders, pages and counts', async (t) => {
  const g = await createGroup(s.admin, 'idp-list', org);
  const sub = await createGroup(s.admin, 'idp-list-sub', g);
  const names = ['delta', 'alpha', 'echo', 'charlie', 'bravo'];
  const created: Array<{ name: string; uid: string; createTime: string }> = [];
  for (const n of names) created.push(await createIdp(g, n));
  // Creation order as the server sees it: by createTime, then uid for a shared millisecond.
  const byCreation = created
    .sort((a, b) => a.createTime.localeCompare(b.createTime) || (a.uid < b.uid ? -1 : 1))
    .map((i) => i.name);
  await createIdp(sub, 'deep');
  const byName = await allPages<{ name: string }>(
    s.admin,
    `${P}?uidp.children_of=${g}&order_by=name&page_size=2`,
    'identityProviders',
  );
  t.deepEqual(
    byName.map((p) => p.length),
    [2, 2, 1],
  );
  t.deepEqual(
    byName.flat().map((i) => i.name),
    [...names].sort(),
  );
  const desc = await s.admin.get(`${P}?uidp.children_of=${g}&order_by=created_at%20desc`);
  t.deepEqual(
    desc.body.identityProviders.map((i: any) => i.name),
    byCreation.reverse(),
  );
  const below = await s.admin.get(`${P}?uidp.descendants_of=${g}`);
  t.is(below.body.totalCount, '6');
  const deep = await s.admin.get(`${P}?uidp.descendants_of=${g}&name=deep`);
  t.deepEqual(
    deep.body.identityProviders.map((i: any) => i.name),
    ['deep'],
  );
  const skipped = await s.admin.get(`${P}?uidp.children_of=${g}&order_by=name&skip=3&page_size=5`);
  t.is(skipped.body.skipped, 3);
  t.is(skipped.body.totalCount, '5');
  t.deepEqual(
    skipped.body.identityProviders.map((i: any) => i.name),
    ['delta', 'echo'],
  );
  t.deepEqual(fields((await s.admin.get(`${P}?order_by=issuer`)).body), ['order_by']);
});

test('idp access: writes need role_bindings.create and the default role’s capabilities', async (t) => {
  const base = ['groups.list', 'identity_providers.list', 'identity_providers.create'];
  const noBind = await callerWith('no-bind', base);
  // roles.list: a default role the caller cannot list is as good as missing.
  const binder = await callerWith('binder', [...base, 'role_bindings.create', 'roles.list']);
  const body = (defaultRole: string) => ({ name: 'by-identity', defaultRole, oidc });

  const denied = await noBind.post(`${P}/${org}`, body(orgRole));
  t.is(denied.status, 403);
  t.is(denied.body.message, 'Permission denied: missing capability role_bindings.create');
  const escalation = await binder.post(`${P}/${org}`, body(viewer));
  t.is(escalation.status, 403);
  const ok = await binder.post(`${P}/${org}`, body(orgRole));
  t.is(ok.status, 200);
  t.is((await binder.get(`${P}/${ok.body.uid}`)).status, 200);
  t.is((await binder.patch(`${P}/${ok.body.uid}`, { description: 'x' })).status, 403);
  t.is((await binder.delete(`${P}/${ok.body.uid}`)).status, 403);
  const outsider = await callerWith('outsider', ['repo.list']);
  t.is((await outsider.get(`${P}/${ok.body.uid}`)).status, 404);
  t.is((await outsider.get(P)).body.totalCount, '0');
});
