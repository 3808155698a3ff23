import test from 'ava';
import { request } from 'node:http';
import { SecretBox } from '../../src/auth/secret-box.js';
import { parseSecretKeys } from '../../src/auth/secret-keys.js';
import { compose } from '../../src/compose.js';
import { loadConfig } from '../../src/config.js';
import { translateDbError } from '../../src/db/errors.js';
import { createBinding, createIdentity, createRole, fields } from '../helpers/iam-fixtures.js';
import { startServer, ADMIN_TOKEN, type TestServer } from '../helpers/server.js';
import { buildTenancy, digest, SECRET, type Tenancy } from '../helpers/tenancy-fixtures.js';
import { pino } from 'pino';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One regression per tenancy hole the first security pass closed, each over HTTP and each
 * failing on the code before its fix.
 */
let s: TestServer;
let t9: Tenancy;
const I = '/iam/v2beta1/identities';
const RB = '/iam/v2beta1/roleBindings';

test.before(async () => {
  s = await startServer();
  t9 = await buildTenancy(s, 'reg');
});
test.after.always(async () => {
  await s?.close();
});

/** A raw request: fetch would normalise the path spellings under test. */
function raw(method: string, path: string, token?: string): Promise<{ status: number; body: any }> {
  const u = new URL(s.url);
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: u.hostname,
        port: u.port,
        method,
        path,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (m) => {
        let text = '';
        m.setEncoding('utf8');
        m.on('data', (c: string) => (text += c));
        m.on('end', () => resolve({ status: m.statusCode ?? 0, body: JSON.parse(text || '{}') }));
      },
    );
    r.on('error', reject);
    r.end();
  });
}

test.serial(
  'takeover: the owner of B cannot rewrite how an identity bound at the org is assumed',
  async (t) => {
    const ownerB = t9.callers['owner@b'];
    // Lives in B (so owner@b holds identity.update on it) but is the org's owner.
    const ci = await createIdentity(s.admin, t9.b, 'org-deployer');
    await createBinding(s.admin, t9.org, ci, t9.builtin.owner!);
    const hijack = { issuer: 'https://attacker.example.com', subject: 'me' };
    const viaClaims = await ownerB.patch(`${I}/${ci}`, { claimMatch: hijack });
    t.is(viaClaims.status, 403, JSON.stringify(viaClaims.body));
    t.is(viaClaims.body.code, 7);
    const viaKeys = await ownerB.patch(`${I}/${ci}?updateMask=claimMatch,staticKeys`, {
      staticKeys: {
        issuer: 'https://attacker.example.com',
        subject: 'me',
        issuerKeys: JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'eA', y: 'eQ' }] }),
      },
    });
    t.is(viaKeys.status, 403);
    const v1 = await ownerB.put(`/iam/v1/identities/${ci}`, {
      name: 'org-deployer',
      claimMatch: hijack,
    });
    t.is(v1.status, 403);
    // What does not decide who may assume it stays the folder owner's to change, also
    // through a v1 PUT that repeats the claims unchanged.
    t.is((await ownerB.patch(`${I}/${ci}`, { description: 'renamed by b' })).status, 200);
    const same = await ownerB.put(`/iam/v1/identities/${ci}`, {
      name: 'org-deployer',
      description: 'put by b',
      claimMatch: { subject: 'sub-org-deployer', issuer: 'https://issuer.example.com' },
    });
    t.is(same.status, 200, JSON.stringify(same.body));
    const after = await s.admin.get(`${I}/${ci}`);
    t.deepEqual(after.body.claimMatch, {
      issuer: 'https://issuer.example.com',
      subject: 'sub-org-deployer',
    });
    // Deleting it would delete the org-level binding owner@b could never delete itself.
    t.is((await ownerB.delete(`${I}/${ci}`)).status, 403);
    const still = await s.admin.get(`${RB}?identity=${encodeURIComponent(ci)}`);
    t.is(still.body.roleBindings.length, 1);
    // Someone who holds every capability the bindings grant may.
    t.is((await s.admin.patch(`${I}/${ci}`, { claimMatch: hijack })).status, 200);
  },
);

test.serial(
  'takeover: an identity bound only within the caller’s scope stays editable',
  async (t) => {
    const ownerB = t9.callers['owner@b'];
    const own = await createIdentity(s.admin, t9.b, 'b-bot');
    await createBinding(s.admin, t9.b, own, t9.builtin.editor!);
    const res = await ownerB.patch(`${I}/${own}`, {
      claimMatch: { issuer: 'https://ci.example.com', subject: 'b' },
    });
    t.is(res.status, 200);
    t.is((await ownerB.delete(`${I}/${own}`)).status, 200);
  },
);

test.serial('routing: no spelling of an API path reaches a handler without a token', async (t) => {
  for (const path of [
    '/IAM/v2beta1/groups',
    '/Iam/v1/groups',
    '/Registry/v2beta1/repos',
    '/VULNERABILITIES/v2beta1/advisories',
    '/iam/V2beta1/groups',
    '/%69am/v2beta1/groups',
    '/iam%2Fv2beta1%2Fgroups',
    '//iam/v2beta1/groups',
    '/iam//v2beta1/groups',
    '/iam/v2beta1/groups/',
    '/iam/v2beta1/./groups',
    '/iam/v2beta1/x/../groups',
    '/iam/v2beta1/groups/%2e%2e',
  ]) {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const anon = await raw(method, path);
      t.is(anon.status, 401, `${method} ${path}`);
      const admin = await raw(method, path, ADMIN_TOKEN);
      t.true(admin.status < 500, `${method} ${path} as admin: ${admin.status}`);
      if (admin.status >= 400) t.is(typeof admin.body.code, 'number', `${method} ${path}`);
    }
  }
  // The router is case-sensitive: another case is another (unknown) path.
  t.is((await raw('GET', '/IAM/v2beta1/groups', ADMIN_TOKEN)).status, 404);
  t.is((await raw('GET', '/HEALTHZ')).status, 404);
});

test.serial(
  'disclosure: a binding to an identity the caller cannot list is NOT_FOUND',
  async (t) => {
    const ownerA = t9.callers['owner@a'];
    const hidden = t9.res['identity@b']!;
    const missing = `${t9.b}/${'0'.repeat(16)}`;
    const seen = await ownerA.post(`${RB}/${t9.a}`, {
      identityUid: hidden,
      roleUid: t9.builtin.viewer,
    });
    const absent = await ownerA.post(`${RB}/${t9.a}`, {
      identityUid: missing,
      roleUid: t9.builtin.viewer,
    });
    t.is(seen.status, 400);
    t.false(JSON.stringify(seen.body).includes('b-workload'));
    t.deepEqual(seen.body, absent.body);
    t.deepEqual(fields(seen.body), ['identityUid']);
  },
);

test.serial(
  'disclosure: a role the caller cannot list is NOT_FOUND wherever it is named',
  async (t) => {
    const ownerA = t9.callers['owner@a'];
    const orgRole = await createRole(s.admin, t9.org, 'org-only', ['groups.list']);
    const missingRole = `${t9.org}/${'0'.repeat(16)}`;
    const self = t9.ids['owner@a']!;
    for (const [path, body] of [
      [`${RB}/${t9.a}`, (r: string) => ({ identityUid: self, roleUid: r })],
      [`/iam/v2beta1/groupInvites/${t9.a}`, (r: string) => ({ roleUid: r, ttl: '60s' })],
      [
        `/iam/v2beta1/identityProviders/${t9.a}`,
        (r: string) => ({
          name: 'x',
          defaultRole: r,
          oidc: { issuer: 'https://accounts.example.com', clientId: 'c', clientSecret: 's' },
        }),
      ],
    ] as const) {
      const hidden = await ownerA.post(path, body(orgRole));
      const absent = await ownerA.post(path, body(missingRole));
      t.is(hidden.status, 400, path);
      t.deepEqual(hidden.body, absent.body, path);
    }
  },
);

test.serial(
  'disclosure: hydrated bindings show only the uid of what the caller cannot list',
  async (t) => {
    // An identity of the org bound at A: the owner of A sees who holds access to A (the
    // uid) but not the org identity's name, subject and issuer.
    const orgId = t9.res['identity@org']!;
    const bound = await createBinding(s.admin, t9.a, orgId, t9.builtin.viewer!);
    const got = await t9.callers['viewer@a'].get(`${RB}/${bound}`);
    t.is(got.status, 200);
    t.deepEqual(got.body.identity, {
      uid: orgId,
      name: '',
      description: '',
      subject: '',
      issuer: '',
    });
    const listed = await t9.callers['viewer@a'].get(`${RB}?identity=${encodeURIComponent(orgId)}`);
    t.is(listed.body.roleBindings.length, 1);
    t.is(listed.body.roleBindings[0].identity.name, '');
    t.is((await s.admin.get(`${RB}/${bound}`)).body.identity.name, 'org-workload');
    await s.admin.delete(`${RB}/${bound}`);
  },
);

test.serial('hostile bytes: NUL and lone surrogates are field violations, not 500s', async (t) => {
  const g = `/iam/v2beta1/groups/${t9.org}`;
  const cases: Array<[string, Promise<{ status: number; body: any }>, string]> = [
    [
      'NUL in a description',
      s.admin.post(g, { name: 'nul', description: 'a\u0000b' }),
      'description',
    ],
    ['lone surrogate', s.admin.post(g, { name: 'sur', description: 'a\ud800b' }), 'description'],
    ['low surrogate', s.admin.patch(g, { description: '\udc00' }), 'description'],
    [
      'NUL in a claim',
      s.admin.post(`${I}/${t9.org}`, {
        name: 'nul-claim',
        claimMatch: { issuer: 'https://i.example.com', subject: 's', claims: { team: 'x\u0000' } },
      }),
      'claimMatch.claims.team',
    ],
    ['NUL in a name filter', s.admin.get('/iam/v2beta1/groups?name=%00'), 'name'],
    ['surrogate in a filter', s.admin.get(`${I}?name=%ED%A0%80`), ''],
    ['NUL in a path', s.admin.get('/iam/v2beta1/groups/%00'), 'uid'],
    ['NUL in a v1 id', s.admin.get('/iam/v1/groups?id=%00'), ''],
    ['NUL in a key', s.admin.post(g, { name: 'k', ['x\u0000']: 1 }), 'body'],
  ];
  for (const [what, pending, field] of cases) {
    const res = await pending;
    t.true(res.status < 500, `${what}: ${res.status}`);
    if (res.status >= 400) t.is(typeof res.body.code, 'number', what);
    if (res.status === 400 && field) t.true(fields(res.body).includes(field), what);
  }
  // Names that exist on every object's prototype are unknown names like any other.
  for (const path of [
    '/iam/v2beta1/groups?__proto__=x',
    '/iam/v2beta1/groups?constructor=x',
    '/iam/v1/group_invites?__proto__=name%20desc&group=y',
    '/iam/v2beta1/identities?toString=1',
  ]) {
    const res = await s.admin.get(path);
    t.is(res.status, 400, path);
  }
  for (const [mask, body] of [
    ['constructor', {}],
    ['__proto__', {}],
    ['', { constructor: { prototype: {} } }],
    ['', JSON.parse('{"__proto__":{"polluted":true}}') as object],
  ] as const) {
    const res = await s.admin.patch(`${g}${mask ? `?updateMask=${mask}` : ''}`, body);
    t.is(res.status, 400, `mask ${mask} ${JSON.stringify(body)}`);
  }
  t.is(({} as Record<string, unknown>).polluted, undefined);
  // The net under the validators: any data exception (SQLSTATE class 22) is the caller's.
  for (const code of ['22021', '22P05', '22003', '22P02']) {
    const mapped = translateDbError(Object.assign(new Error('x'), { code })) as { code?: number };
    t.is(mapped.code, 3, code);
  }
});

test.serial('registry: tag.create alone cannot move an existing tag', async (t) => {
  const repo = t9.res['repo@a']!;
  const role = await createRole(s.admin, t9.a, 'pusher-new-only', [
    'groups.list',
    'repo.list',
    'tag.list',
    'tag.create',
  ]);
  const id = await createIdentity(s.admin, t9.a, 'pusher');
  await createBinding(s.admin, t9.a, id, role);
  const pusher = s.client(await t9.tokenFor(id));
  const tags = '/registry/v2beta1/tags';
  t.is((await pusher.post(`${tags}/${repo}`, { name: 'v1', digest: digest('b') })).status, 200);
  const move = await pusher.post(`${tags}/${repo}`, { name: 'latest', digest: digest('f') });
  t.is(move.status, 403);
  t.is((await s.admin.get(`${tags}/${t9.res['tag@a']}`)).body.digest, digest('a'));
  // editor holds tag.update: moving is allowed.
  const editor = t9.callers['editor@a'];
  t.is((await editor.post(`${tags}/${repo}`, { name: 'latest', digest: digest('c') })).status, 200);
  t.is((await s.admin.get(`${tags}/${t9.res['tag@a']}`)).body.digest, digest('c'));
});

test.serial(
  'secrets at rest: the column never holds the client secret, and reads work',
  async (t) => {
    const idps = s.arbor.services.identityProviders;
    const uid = t9.res['idp@a']!;
    const row = async () => s.db.knex('identity_providers').where({ uid }).first();
    t.false(String((await row()).oidc_client_secret).includes(SECRET));
    t.regex((await row()).oidc_client_secret, /^arbor-secret:v1:[0-9a-f]{16}:/);
    t.is(await idps.clientSecret(uid), SECRET);
    // Bound to its IdP: copied into another row it does not open.
    const other = t9.res['idp@b']!;
    await s.db
      .knex('identity_providers')
      .where({ uid: other })
      .update({ oidc_client_secret: (await row()).oidc_client_secret });
    await t.throwsAsync(() => idps.clientSecret(other));
    // A plain-text row left by an older version is sealed by the next start.
    await s.db
      .knex('identity_providers')
      .where({ uid: other })
      .update({ oidc_client_secret: 'legacy-plain', oidc_client_secret_sealed: false });
    t.is((await idps.resealClientSecrets()).resealed, 1);
    const legacy = await s.db.knex('identity_providers').where({ uid: other }).first();
    t.false(String(legacy.oidc_client_secret).includes('legacy-plain'));
    t.is(await idps.clientSecret(other), 'legacy-plain');
    t.is((await idps.resealClientSecrets()).resealed, 0);
  },
);

test('secrets at rest: keys rotate through ARBOR_SECRET_KEY, newest first', async (t) => {
  const k1 = randomBytes(32).toString('base64');
  const k2 = randomBytes(32).toString('base64');
  const [key1] = parseSecretKeys(k1);
  const [key2] = parseSecretKeys(k2);
  const srv = await startServer({ ARBOR_SECRET_KEY: k1 });
  try {
    const org = (await srv.admin.post('/iam/v2beta1/groups', { name: 'rot' })).body.uid;
    const roles = (await srv.admin.get('/iam/v2beta1/roles?name=viewer')).body.roles;
    const idp = (
      await srv.admin.post(`/iam/v2beta1/identityProviders/${org}`, {
        name: 'rot',
        defaultRole: roles[0].uid,
        oidc: { issuer: 'https://a.example.com', clientId: 'c', clientSecret: 'rotate-me' },
      })
    ).body.uid;
    const stored = async () =>
      String(
        (await srv.db.knex('identity_providers').where({ uid: idp }).first()).oidc_client_secret,
      );
    t.is(SecretBox.kidOf(await stored()), key1!.kid);
    // Step 2 of the rotation: the new key first, the old one still accepted. The start
    // reseals under the new key.
    const logger = pino({ level: 'silent' });
    const env = (k: string) =>
      loadConfig({ ARBOR_SECRET_KEY: k, DATA_DIR: mkdtempSync(join(tmpdir(), 'arbor-rot-')) });
    const second = await compose(env(`${k2},${k1}`), { database: srv.db, logger });
    t.is(SecretBox.kidOf(await stored()), key2!.kid);
    t.is(await second.services.identityProviders.clientSecret(idp), 'rotate-me');
    // Step 3: the old key gone, everything still opens.
    const third = await compose(env(k2), { database: srv.db, logger });
    t.is(await third.services.identityProviders.clientSecret(idp), 'rotate-me');
    t.throws(() => parseSecretKeys('too-short'));
  } finally {
    await srv.close();
  }
});
