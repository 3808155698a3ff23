import test from 'ava';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { basic, builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';

// Every token Arbor signs says what it is for, and every verifier
// accepts only its own kind. A registry access token is never a credential.
const SERVICE = 'registry.kinds.local';

let s: TestServer;
let issuer: TestIssuer;
let org: string;
let puller: string;
let apiToken: string;

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true', ARBOR_REGISTRY_SERVICE: SERVICE });
  issuer = await TestIssuer.start();
  org = await createGroup(s.admin, 'kinds');
  puller = await createIdentity(s.admin, org, 'puller', { issuer: issuer.url, subject: 'p' });
  await createBinding(s.admin, org, puller, await builtinRoleUid(s.admin, 'registry.pull'));
  apiToken = (await exchange(s.arbor.config.issuerUrl)).body.token;
});
test.after.always(async () => {
  await issuer?.stop();
  await s?.close();
});

async function exchange(aud: string): Promise<Reply> {
  const upstream = await issuer.mint({ sub: 'p', aud: s.arbor.config.issuerUrl });
  const q = new URLSearchParams({ aud, identity: puller });
  const res = await s.client(upstream).get(`/sts/exchange?${q.toString()}`);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res;
}

function registryToken(password: string, scope: string): Promise<Reply> {
  const q = new URLSearchParams({ service: SERVICE, scope });
  return s.client().raw(`/auth/registry/token?${q.toString()}`, {
    headers: { authorization: basic('_token', password) },
  });
}

test('token kinds: a registry access token is not a credential for another one', async (t) => {
  const app = await registryToken(apiToken, `repository:${org}/app:pull`);
  t.is(app.status, 200);
  t.deepEqual(decodeJwt(app.body.token).access, [
    { type: 'repository', name: `${org}/app`, actions: ['pull'] },
  ]);
  // Fed back as the password: a pull token for …/app must not buy one for …/other.
  const widened = await registryToken(app.body.token, `repository:${org}/other:pull`);
  t.is(widened.status, 401, JSON.stringify(widened.body));
  t.is(widened.body.code, 16);
  t.false('token' in widened.body);
  // Nor renew itself.
  const renewed = await registryToken(app.body.token, `repository:${org}/app:pull`);
  t.is(renewed.status, 401);
});

test('token kinds: each token says what it is for, and only its own verifier takes it', async (t) => {
  t.is(decodeProtectedHeader(apiToken).typ, 'at+jwt');
  t.is(decodeJwt(apiToken).token_use, 'api');
  const login = (await exchange(SERVICE)).body.token as string;
  t.is(decodeJwt(login).token_use, 'registry-login');
  const access = (await registryToken(login, `repository:${org}/app:pull`)).body.token as string;
  t.is(decodeJwt(access).token_use, 'registry-access');
  // The registry login token is what the token server takes (besides API tokens).
  t.is((await registryToken(login, `repository:${org}/app:pull`)).status, 200);
  // None but the API token is an API credential, even one signed for the API's own audience.
  const api = s.arbor.config.issuerUrl;
  const forged = await Promise.all(
    (['event-delivery', 'registry-login', 'registry-access'] as const).map(
      async (use) => (await s.arbor.tokens.signFor(use, api, puller, {}, 300)).token,
    ),
  );
  for (const tok of [login, access, ...forged]) {
    const res = await s.client(tok).get('/iam/v2beta1/groups');
    t.is(res.status, 401, String(decodeJwt(tok).token_use));
  }
  t.is((await s.client(apiToken).get('/iam/v2beta1/groups')).status, 200);
  // An event delivery token for the registry's audience is no registry credential either.
  const event = await s.arbor.tokens.signFor('event-delivery', SERVICE, puller, {}, 300);
  t.is((await registryToken(event.token, `repository:${org}/app:pull`)).status, 401);
});
