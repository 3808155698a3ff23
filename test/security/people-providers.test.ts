import test from 'ava';
import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';
import { assertRefused } from '../helpers/sts.js';

// A person's identity belongs to the provider that registered it. The
// attacker owns organization B and points an IdentityProvider at the public issuer Alice
// also signs in to Arbor with; their own app obtains ID tokens for Alice.
const CLIENT = 'arbor-cli';
const B_APP = 'org-b-app';

let s: TestServer;
let pub: TestIssuer;
let orgA: string;
let orgB: string;
let aud: string;
let alice: string;
let mallory: string;
let viewer: string;

test.before(async () => {
  pub = await TestIssuer.start();
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_LOGIN_ISSUER: pub.url,
    ARBOR_LOGIN_CLIENT_ID: CLIENT,
  });
  aud = s.arbor.config.issuerUrl;
  orgA = await createGroup(s.admin, 'people-a');
  orgB = await createGroup(s.admin, 'people-b');
  viewer = await builtinRoleUid(s.admin, 'viewer');
  const owner = await builtinRoleUid(s.admin, 'owner');
  // Alice signs in to Arbor and is given a role in organization A.
  alice = await signedIn(await pub.mint({ sub: 'alice', aud: CLIENT, email: 'alice@a.example' }));
  await bind(orgA, alice, viewer);
  // Mallory owns organization B.
  const m = await signIn(await pub.mint({ sub: 'mallory', aud: CLIENT }));
  mallory = m.body.token;
  await bind(orgB, decodeJwt(mallory).sub!, owner);
});
test.after.always(async () => {
  await pub?.stop();
  await s?.close();
});

function signIn(idToken: string, query = ''): Promise<Reply> {
  return s.client(idToken).get(`/sts/exchange?aud=${encodeURIComponent(aud)}${query}`);
}

async function signedIn(idToken: string): Promise<string> {
  const res = await signIn(idToken);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return decodeJwt(res.body.token).sub!;
}

async function bind(group: string, identityUid: string, roleUid: string): Promise<void> {
  const res = await s.admin.post(`/iam/v2beta1/roleBindings/${group}`, { identityUid, roleUid });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
}

async function idpOfB(clientId: string): Promise<Reply> {
  return s.client(mallory).post(`/iam/v2beta1/identityProviders/${orgB}`, {
    name: `b ${clientId}`,
    defaultRole: viewer,
    oidc: { issuer: pub.url, clientId, clientSecret: 'b-secret' },
  });
}

test.serial(
  "people: another organization's IdP for the same issuer never signs in as someone else's person",
  async (t) => {
    const idp = await idpOfB(B_APP);
    t.is(idp.status, 200, JSON.stringify(idp.body));
    // A token Mallory's app obtained when Alice used "Sign in with …" on Mallory's site.
    const res = await signIn(await pub.mint({ sub: 'alice', aud: B_APP }));
    t.is(res.status, 200, JSON.stringify(res.body));
    const asB = decodeJwt(res.body.token).sub!;
    t.not(asB, alice, "B's IdP must register its own person, not reach Alice's");
    t.true(asB.startsWith(`${orgB}/`), "B's people live inside organization B");
    const groups = await s.client(res.body.token).get('/iam/v2beta1/groups');
    t.deepEqual(
      groups.body.groups.map((g: { uid: string }) => g.uid),
      [orgB],
    );
    // Alice's own identity still holds exactly what it held: B's default role is not on it.
    const hers = await s.admin.get(`/iam/v2beta1/roleBindings?uidp.descendants_of=${orgB}`);
    t.false(hers.body.roleBindings.some((b: any) => b.identity.uid === alice));
    // And Alice's sign-in through the server's client still finds her.
    t.is(await signedIn(await pub.mint({ sub: 'alice', aud: CLIENT })), alice);
  },
);

test.serial("people: an organization's IdP cannot claim the server's login client", async (t) => {
  const created = await idpOfB(CLIENT);
  assertRefused(t, created, 400, 3, 'create');
  t.regex(created.body.message, /oidc\.clientId/);
  const other = await idpOfB('org-b-other');
  t.is(other.status, 200);
  const moved = await s
    .client(mallory)
    .patch(`/iam/v2beta1/identityProviders/${other.body.uid}?update_mask=oidc`, {
      oidc: { issuer: `${pub.url}/`, clientId: CLIENT },
    });
  assertRefused(t, moved, 400, 3, 'update');
});

test.serial(
  "people: /sts/exchange?identity=<a person> needs a token from that person's provider",
  async (t) => {
    // A token from the right issuer and subject, but meant for Arbor rather than the client
    // the person signs in through, is not the person's provider speaking.
    const forArbor = await pub.mint({ sub: 'alice', aud });
    assertRefused(t, await signIn(forArbor, `&identity=${alice}`), 403, 7, 'aud=arbor');
    const forB = await pub.mint({ sub: 'alice', aud: B_APP });
    assertRefused(t, await signIn(forB, `&identity=${alice}`), 403, 7, "B's client");
    const viaServer = await signIn(
      await pub.mint({ sub: 'alice', aud: CLIENT }),
      `&identity=${alice}`,
    );
    t.is(viaServer.status, 200, JSON.stringify(viaServer.body));
    t.is(decodeJwt(viaServer.body.token).sub, alice);
  },
);

test.serial(
  "people: an organization IdP's person cannot be bound outside its organization",
  async (t) => {
    const res = await signIn(await pub.mint({ sub: 'alice', aud: B_APP }));
    const asB = s.client(res.body.token);
    const invite = await s.admin.post(`/iam/v2beta1/groupInvites/${orgA}`, {
      roleUid: viewer,
      ttl: '3600s',
    });
    t.is(invite.status, 200);
    // Mallory holds this identity's tokens: it must not gain anything in organization A.
    const redeemed = await asB.post('/iam/v2beta1/groupInvites:redeem', { code: invite.body.code });
    assertRefused(t, redeemed, 400, 3, 'redeem');
    const bound = await s.admin.post(`/iam/v2beta1/roleBindings/${orgA}`, {
      identityUid: decodeJwt(res.body.token).sub,
      roleUid: viewer,
    });
    assertRefused(t, bound, 400, 3, 'bind');
  },
);

test.serial('people: an IdP registers at most ARBOR_MAX_PEOPLE_PER_PROVIDER people', async (t) => {
  const capped = await startServer(
    { ARBOR_ALLOW_INSECURE_ISSUERS: 'true', ARBOR_MAX_PEOPLE_PER_PROVIDER: '2' },
    {},
  );
  t.teardown(() => capped.close());
  const org = await createGroup(capped.admin, 'capped');
  const idp = await capped.admin.post(`/iam/v2beta1/identityProviders/${org}`, {
    name: 'capped',
    defaultRole: await builtinRoleUid(capped.admin, 'viewer'),
    oidc: { issuer: pub.url, clientId: B_APP, clientSecret: 'x' },
  });
  t.is(idp.status, 200, JSON.stringify(idp.body));
  const at = (sub: string) =>
    pub
      .mint({ sub, aud: B_APP })
      .then((tok) =>
        capped
          .client(tok)
          .get(`/sts/exchange?aud=${encodeURIComponent(capped.arbor.config.issuerUrl)}`),
      );
  t.is((await at('p1')).status, 200);
  t.is((await at('p2')).status, 200);
  assertRefused(t, await at('p3'), 429, 8, 'third person');
  // People already registered still sign in.
  t.is((await at('p1')).status, 200);
});
