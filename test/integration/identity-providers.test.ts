import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { createRole, fields } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const P = '/iam/v2beta1/identityProviders';
const SECRET = 'super-secret-client-credential-0123456789';
const viewer = builtinRoleUid('viewer');

let s: TestServer;
let org: string;
let team: string;
let orgRole: string;
let teamRole: string;

const oidc = (extra: Record<string, unknown> = {}) => ({
  issuer: 'https://accounts.example.com',
  clientId: 'arbor-client',
  clientSecret: SECRET,
  additionalScopes: ['email', 'profile'],
  ...extra,
});

async function createIdp(group: string, name: string, extra: Record<string, unknown> = {}) {
  const res = await s.admin.post(`${P}/${group}`, {
    name,
    defaultRole: viewer,
    oidc: oidc(),
    ...extra,
  });
  if (res.status !== 200) throw new Error(`idp ${name}: ${JSON.stringify(res.body)}`);
  return res.body as { uid: string; name: string; createTime: string; updateTime: string };
}

test.before(async () => {
  // Explicitly strict, whatever the helper's default, so http issuers are refused here.
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'false' });
  org = await createGroup(s.admin, 'idp-org');
  team = await createGroup(s.admin, 'idp-team', org);
  orgRole = await createRole(s.admin, org, 'org-role', ['groups.list']);
  teamRole = await createRole(s.admin, team, 'team-role', ['groups.list']);
});
test.after.always(async () => {
  await s?.close();
});

test('idp: create, get and list never show the client secret', async (t) => {
  const created = await s.admin.raw(`${P}/${org}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'corp sso',
      description: 'Okta',
      defaultRole: viewer,
      oidc: oidc(),
    }),
  });
  t.is(created.status, 200);
  const idp = created.body;
  t.regex(idp.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
  t.like(idp, { name: 'corp sso', description: 'Okta', defaultRole: viewer });
  t.deepEqual(idp.oidc, {
    issuer: 'https://accounts.example.com',
    clientId: 'arbor-client',
    additionalScopes: ['email', 'profile'],
    pkceEnabled: false,
  });
  t.is(idp.createTime, idp.updateTime);
  for (const path of [
    `${P}/${idp.uid}`,
    `${P}?uidp.children_of=${org}`,
    `/iam/v1/identityProviders`,
  ]) {
    const res = await s.admin.raw(path, { method: 'GET' });
    t.is(res.status, 200, path);
    t.false(JSON.stringify(res.body).includes(SECRET), path);
    t.false(JSON.stringify(res.body).includes('clientSecret'), path);
  }
  t.false(JSON.stringify(created.body).includes(SECRET));
  // Sealed at rest (docs/security.md); Arbor itself can still read it.
  const stored = await s.db.knex('identity_providers').where({ uid: idp.uid }).first();
  t.false(String(stored.oidc_client_secret).includes(SECRET));
  t.is(await s.arbor.services.identityProviders.clientSecret(idp.uid), SECRET);
});

test('idp: every invalid field is named', async (t) => {
  const empty = await s.admin.post(`${P}/${org}`, {});
  t.is(empty.status, 400);
  t.deepEqual(fields(empty.body).sort(), ['defaultRole', 'name', 'oidc']);

  const bad = await s.admin.post(`${P}/${org}`, {
    name: 'Bad Name',
    defaultRole: viewer,
    oidc: {
      issuer: 'http://insecure.example.com',
      additionalScopes: ['has space'],
      pkceEnabled: 'yes',
    },
    colour: 'red',
  });
  t.is(bad.status, 400);
  t.deepEqual(fields(bad.body).sort(), [
    'colour',
    'name',
    'oidc.additionalScopes.0',
    'oidc.clientId',
    'oidc.issuer',
    'oidc.pkceEnabled',
  ]);

  const noSecret = await s.admin.post(`${P}/${org}`, {
    name: 'no-secret',
    defaultRole: viewer,
    oidc: { issuer: 'https://idp.example.com', clientId: 'c' },
  });
  t.is(noSecret.status, 400);
  t.deepEqual(noSecret.body.details[1].fieldViolations, [
    {
      field: 'oidc.clientSecret',
      description: 'clientSecret is required unless pkceEnabled is true',
    },
  ]);
  const pkce = await s.admin.post(`${P}/${org}`, {
    name: 'pkce-only',
    defaultRole: viewer,
    oidc: { issuer: 'https://idp.example.com', clientId: 'c', pkceEnabled: true },
  });
  t.is(pkce.status, 200);
  t.true(pkce.body.oidc.pkceEnabled);
});

test('idp: defaultRole must exist and be built in or defined at or above the group', async (t) => {
  const below = await s.admin.post(`${P}/${org}`, {
    name: 'r1',
    defaultRole: teamRole,
    oidc: oidc(),
  });
  const missing = await s.admin.post(`${P}/${org}`, {
    name: 'r2',
    defaultRole: `${org}/${'0'.repeat(16)}`,
    oidc: oidc(),
  });
  const garbage = await s.admin.post(`${P}/${org}`, {
    name: 'r3',
    defaultRole: 'viewer',
    oidc: oidc(),
  });
  for (const res of [below, missing, garbage]) {
    t.is(res.status, 400);
    t.deepEqual(fields(res.body), ['defaultRole']);
  }
  t.is(
    (await s.admin.post(`${P}/${team}`, { name: 'r4', defaultRole: orgRole, oidc: oidc() })).status,
    200,
  );
  t.is(
    (await s.admin.post(`${P}/${team}`, { name: 'r5', defaultRole: teamRole, oidc: oidc() }))
      .status,
    200,
  );
});

// Serial: ava runs it before the concurrent tests, so the second server's start-up (PGlite
// migrations hold the event loop) cannot stall their connections.
test.serial('idp: http issuers only with ARBOR_ALLOW_INSECURE_ISSUERS', async (t) => {
  const body = {
    name: 'dev',
    defaultRole: viewer,
    oidc: oidc({ issuer: 'http://127.0.0.1:5556/dex' }),
  };
  const refused = await s.admin.post(`${P}/${org}`, body);
  t.is(refused.status, 400);
  t.is(refused.body.details[1].fieldViolations[0].field, 'oidc.issuer');
  const dev = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  try {
    const g = await createGroup(dev.admin, 'dev-org');
    t.is((await dev.admin.post(`${P}/${g}`, body)).status, 200);
  } finally {
    await dev.close();
  }
});

test('idp: a missing group is NOT_FOUND and a malformed one INVALID_ARGUMENT', async (t) => {
  const missing = await s.admin.post(`${P}/${'9'.repeat(40)}`, {
    name: 'x',
    defaultRole: viewer,
    oidc: oidc(),
  });
  t.is(missing.status, 404);
  const bad = await s.admin.post(`${P}/nope`, { name: 'x', defaultRole: viewer, oidc: oidc() });
  t.is(bad.status, 400);
  t.deepEqual(fields(bad.body), ['parent']);
});

test('idp: update with a mask; the secret is kept unless a new one is given', async (t) => {
  const idp = await createIdp(org, 'updatable');
  const masked = await s.admin.patch(`${P}/${idp.uid}?updateMask=description`, {
    name: 'ignored',
    description: 'now described',
  });
  t.is(masked.status, 200);
  t.like(masked.body, { name: 'updatable', description: 'now described' });

  const oidcOnly = await s.admin.patch(`${P}/${idp.uid}`, {
    oidc: { issuer: 'https://other.example.com', clientId: 'new-client' },
  });
  t.is(oidcOnly.status, 200);
  t.deepEqual(oidcOnly.body.oidc, {
    issuer: 'https://other.example.com',
    clientId: 'new-client',
    additionalScopes: [],
    pkceEnabled: false,
  });
  // What Arbor reads back (the column itself holds only the sealed form).
  const secret = () => s.arbor.services.identityProviders.clientSecret(idp.uid);
  t.is(await secret(), SECRET);
  const emptySecret = await s.admin.patch(`${P}/${idp.uid}?updateMask=oidc`, {
    oidc: { issuer: 'https://other.example.com', clientId: 'new-client', clientSecret: '' },
  });
  t.is(emptySecret.status, 200);
  t.is(await secret(), SECRET);
  const rotated = await s.admin.patch(`${P}/${idp.uid}`, {
    oidc: { issuer: 'https://other.example.com', clientId: 'new-client', clientSecret: 'rotated' },
  });
  t.false(JSON.stringify(rotated.body).includes('rotated'));
  t.is(await secret(), 'rotated');

  const role = await s.admin.patch(`${P}/${idp.uid}`, { defaultRole: orgRole });
  t.is(role.body.defaultRole, orgRole);
  const badRole = await s.admin.patch(`${P}/${idp.uid}`, { defaultRole: teamRole });
  t.deepEqual(fields(badRole.body), ['defaultRole']);
  const cleared = await s.admin.patch(`${P}/${idp.uid}?updateMask=oidc`, {});
  t.is(cleared.status, 400);
  t.true(fields(cleared.body).includes('oidc.clientId'));
  const immutable = await s.admin.patch(`${P}/${idp.uid}?updateMask=uid`, {});
  t.deepEqual(fields(immutable.body), ['update_mask']);
  t.is((await s.admin.patch(`${P}/${org}/${'1'.repeat(16)}`, { description: 'x' })).status, 404);
});

test('idp: an oidc update without any secret needs pkce', async (t) => {
  const idp = await createIdp(org, 'pkce-flip', {
    oidc: { issuer: 'https://idp.example.com', clientId: 'c', pkceEnabled: true },
  });
  const res = await s.admin.patch(`${P}/${idp.uid}`, {
    oidc: { issuer: 'https://idp.example.com', clientId: 'c', pkceEnabled: false },
  });
  t.is(res.status, 400);
  t.deepEqual(fields(res.body), ['oidc.clientSecret']);
});

test('idp: delete, and a group with an idp cannot be deleted', async (t) => {
  const g = await createGroup(s.admin, 'idp-delete', org);
  const idp = await createIdp(g, 'doomed');
  const blocked = await s.admin.delete(`/iam/v2beta1/groups/${g}`);
  t.is(blocked.status, 400);
  t.is(blocked.body.details[1].violations[0].type, 'RESOURCE_NOT_EMPTY');
  t.is(
    blocked.body.message,
    'Precondition failed: cannot delete group with child identity providers',
  );
  t.deepEqual((await s.admin.delete(`${P}/${idp.uid}`)).body, {});
  t.is((await s.admin.get(`${P}/${idp.uid}`)).status, 404);
  t.is((await s.admin.delete(`${P}/${idp.uid}`)).status, 404);
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${g}`)).status, 200);
});

test('idp: a role that is some idp default cannot be deleted', async (t) => {
  const role = await createRole(s.admin, org, 'idp-default', ['groups.list']);
  const idp = await createIdp(org, 'holds-role', { defaultRole: role });
  const res = await s.admin.delete(`/iam/v2beta1/roles/${role}`);
  t.is(res.status, 400);
  t.is(res.body.code, 9);
  await s.admin.delete(`${P}/${idp.uid}`);
  t.is((await s.admin.delete(`/iam/v2beta1/roles/${role}`)).status, 200);
});

test('idp: v1 uses id, no timestamps and PUT replaces', async (t) => {
  const created = await s.admin.post(`/iam/v1/identityProviders/${org}`, {
    name: 'v1 idp',
    defaultRole: viewer,
    oidc: oidc(),
  });
  t.is(created.status, 200);
  t.deepEqual(Object.keys(created.body).sort(), [
    'defaultRole',
    'description',
    'id',
    'name',
    'oidc',
  ]);
  const put = await s.admin.put(`/iam/v1/identityProviders/${created.body.id}`, {
    id: created.body.id,
    name: 'v1 idp',
    defaultRole: viewer,
    oidc: oidc({ clientSecret: undefined }),
  });
  t.is(put.status, 200);
  t.is(put.body.description, '');
  const listed = await s.admin.get(`/iam/v1/identityProviders?id=${created.body.id}`);
  t.deepEqual(
    listed.body.items.map((i: any) => i.id),
    [created.body.id],
  );
});
