import test from 'ava';
import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';

const CLIENT = 'arbor-cli';
const ORG_CLIENT = 'org-sso';

let s: TestServer;
let login: TestIssuer;
let orgIdp: TestIssuer;
let stranger: TestIssuer;
let org: string;
let otherOrg: string;
let aud: string;

test.before(async () => {
  login = await TestIssuer.start();
  orgIdp = await TestIssuer.start('ES256');
  stranger = await TestIssuer.start();
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_LOGIN_ISSUER: login.url,
    ARBOR_LOGIN_CLIENT_ID: CLIENT,
  });
  aud = s.arbor.config.issuerUrl;
  org = await createGroup(s.admin, 'people-org');
  otherOrg = await createGroup(s.admin, 'people-other');
  const idp = await s.admin.post(`/iam/v2beta1/identityProviders/${org}`, {
    name: 'org sso',
    defaultRole: await builtinRoleUid(s.admin, 'viewer'),
    oidc: { issuer: orgIdp.url, clientId: ORG_CLIENT, clientSecret: 's3cret' },
  });
  if (idp.status !== 200) throw new Error(JSON.stringify(idp.body));
});
test.after.always(async () => {
  await Promise.all([login?.stop(), orgIdp?.stop(), stranger?.stop()]);
  await s?.close();
});

function signIn(idToken: string): Promise<Reply> {
  return s.client(idToken).get(`/sts/exchange?aud=${encodeURIComponent(aud)}`);
}

async function rootIdentities(): Promise<
  Array<{ uid: string; name: string; description: string }>
> {
  const all = await s.admin.get('/iam/v2beta1/identities?page_size=200');
  return all.body.identities.filter((i: { uid: string }) => /^[0-9a-f]{40}$/.test(i.uid));
}

test.serial(
  'people: the first sign-in registers a user identity; later ones find the same one',
  async (t) => {
    const token = await login.mint({
      sub: 'alice',
      aud: CLIENT,
      email: 'alice@example.com',
      name: 'Alice Liddell',
    });
    const first = await signIn(token);
    t.is(first.status, 200, JSON.stringify(first.body));
    const uid = decodeJwt(first.body.token).sub!;
    t.regex(uid, /^[0-9a-f]{40}$/);
    t.like(decodeJwt(first.body.token), { iss: aud, aud, act: { iss: login.url, sub: 'alice' } });

    const again = await signIn(await login.mint({ sub: 'alice', aud: CLIENT }));
    t.is(decodeJwt(again.body.token).sub, uid);
    const me = (await rootIdentities()).filter((i) => i.uid === uid);
    t.deepEqual(
      me.map((i) => [i.name, i.description]),
      [['Alice Liddell', 'alice@example.com']],
    );
    // Keyed by the exact pair: another subject is another person.
    const bob = await signIn(await login.mint({ sub: 'Alice', aud: CLIENT }));
    t.not(decodeJwt(bob.body.token).sub, uid);
    // A person holds nothing until bound: their token works but lists nothing.
    const groups = await s.client(first.body.token).get('/iam/v2beta1/groups');
    t.is(groups.status, 200);
    t.deepEqual(groups.body.groups, []);
    // But they may read themselves (`arbor whoami` shows their own name), and nobody else.
    const self = await s.client(first.body.token).get(`/iam/v2beta1/identities/${uid}`);
    t.is(self.status, 200, JSON.stringify(self.body));
    t.is(self.body.name, 'Alice Liddell');
    const other = await s
      .client(first.body.token)
      .get(`/iam/v2beta1/identities/${decodeJwt(bob.body.token).sub}`);
    t.is(other.status, 404);
  },
);

test.serial('people: concurrent first sign-ins of one person register one identity', async (t) => {
  const tokens = await Promise.all(
    Array.from({ length: 6 }, () => login.mint({ sub: 'carol', aud: CLIENT })),
  );
  const answers = await Promise.all(tokens.map(signIn));
  t.true(answers.every((a) => a.status === 200));
  t.is(new Set(answers.map((a) => decodeJwt(a.body.token).sub)).size, 1);
});

test.serial(
  'people: an untrusted provider, another client or a forged token is refused and registers no one',
  async (t) => {
    const before = (await rootIdentities()).length;
    const refusals: Array<[string, number, number]> = [
      [await stranger.mint({ sub: 'mallory', aud: CLIENT }), 403, 7],
      [await login.mint({ sub: 'mallory', aud: 'some-other-client' }), 403, 7],
      [
        await login.mint({ sub: 'mallory', aud: CLIENT }, { key: await TestIssuer.strayKey() }),
        401,
        16,
      ],
      [await login.mint({ sub: 'mallory', aud: CLIENT, exp: 1000 }), 401, 16],
      [await login.mint({ aud: CLIENT }, { omit: ['sub'] }), 401, 16],
    ];
    for (const [token, status, code] of refusals) {
      const res = await signIn(token);
      t.is(res.status, status, JSON.stringify(res.body));
      t.is(res.body.code, code);
      t.false('token' in res.body);
    }
    t.is((await rootIdentities()).length, before);
    const wrongAud = await s
      .client(await login.mint({ sub: 'alice', aud: CLIENT }))
      .get('/sts/exchange?aud=https://elsewhere.example');
    t.is(wrongAud.status, 400);
  },
);

test.serial(
  'people: signing in through an organization IdP applies its default role there, once',
  async (t) => {
    const token = await orgIdp.mint({ sub: 'dave', aud: ORG_CLIENT, email: 'dave@org.example' });
    const res = await signIn(token);
    t.is(res.status, 200, JSON.stringify(res.body));
    const uid = decodeJwt(res.body.token).sub!;
    const api = s.client(res.body.token);
    const groups = await api.get('/iam/v2beta1/groups');
    t.deepEqual(
      groups.body.groups.map((g: { uid: string }) => g.uid),
      [org],
    );
    await signIn(await orgIdp.mint({ sub: 'dave', aud: ORG_CLIENT }));
    const bindings = await s.admin.get(`/iam/v2beta1/roleBindings?uidp.children_of=${org}`);
    t.is(
      bindings.body.roleBindings.filter((b: any) => (b.identity?.uid ?? b.identity) === uid).length,
      1,
    );
    // The registration and its binding are in the audit trail, done by the person at the STS.
    const audit = await s.admin.get(
      `/audit/v2beta1/events?actor=${encodeURIComponent(`identity:${uid}`)}&page_size=50`,
    );
    t.is(audit.status, 200, JSON.stringify(audit.body));
    t.deepEqual(
      audit.body.events.map((e: any) => `${e.operation} ${e.resourceType} ${e.door}`).sort(),
      ['create iam.arbor.dev/Identity sts', 'create iam.arbor.dev/RoleBinding sts'],
    );
    // The same person through the server's provider is a different (issuer, subject).
    const viaServer = await signIn(await login.mint({ sub: 'dave', aud: CLIENT }));
    t.not(decodeJwt(viaServer.body.token).sub, uid);
  },
);

test.serial(
  'people: an invite binds a signed-in person with its role at its group, exactly once',
  async (t) => {
    const invite = await s.admin.post(`/iam/v2beta1/groupInvites/${otherOrg}`, {
      roleUid: await builtinRoleUid(s.admin, 'registry.pull'),
      ttl: '3600s',
      singleUse: true,
    });
    t.is(invite.status, 200);
    const erin = await signIn(await login.mint({ sub: 'erin', aud: CLIENT }));
    const api = s.client(erin.body.token);
    const redeemed = await api.post('/iam/v2beta1/groupInvites:redeem', { code: invite.body.code });
    t.is(redeemed.status, 200, JSON.stringify(redeemed.body));
    const again = await api.post('/iam/v2beta1/groupInvites:redeem', { code: invite.body.code });
    t.is(again.status, 400);
    t.is(again.body.code, 9);
    const repos = await api.get('/registry/v2beta1/repos');
    t.is(repos.status, 200);
  },
);
