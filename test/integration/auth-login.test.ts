import test from 'ava';
import { decodeJwt } from 'jose';
import { browserLogin, exchangeAtSts } from '../../src/auth/oidc-login.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let provider: TestIssuer;
let identity: string;

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  provider = await TestIssuer.start();
  provider.loginAudience = s.arbor.config.issuerUrl;
  const org = await createGroup(s.admin, 'login-org');
  identity = await createIdentity(s.admin, org, 'alice', {
    issuer: provider.url,
    subject: 'alice',
  });
});
test.after.always(async () => {
  await provider?.stop();
  await s?.close();
});

test('login: browser flow with PKCE on a loopback redirect, then the STS exchange', async (t) => {
  const idToken = await browserLogin({
    issuer: provider.url,
    clientId: 'arbor-cli',
    // Stand in for the browser: follow the authorization redirect back to the CLI.
    onAuthorizeUrl: (url) => {
      t.regex(url, /code_challenge_method=S256/);
      t.regex(url, /redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback/);
      void fetch(url);
    },
    timeoutMs: 10_000,
  });
  t.is(decodeJwt(idToken).sub, 'alice');
  const { token } = await exchangeAtSts(s.url, identity, idToken, s.arbor.config.issuerUrl);
  t.is(decodeJwt(token).sub, identity);
});

test('login: a callback with the wrong state is refused', async (t) => {
  await t.throwsAsync(
    browserLogin({
      issuer: provider.url,
      clientId: 'arbor-cli',
      onAuthorizeUrl: (url) => {
        const redirect = new URL(new URL(url).searchParams.get('redirect_uri')!);
        redirect.searchParams.set('code', 'stolen');
        redirect.searchParams.set('state', 'forged');
        void fetch(redirect);
      },
      timeoutMs: 10_000,
    }),
    { message: /state mismatch/ },
  );
});

test('login: the headless path exchanges a pasted ID token, and a foreign one is refused', async (t) => {
  const pasted = await provider.mint({ sub: 'alice', aud: s.arbor.config.issuerUrl });
  t.truthy((await exchangeAtSts(s.url, identity, pasted, s.arbor.config.issuerUrl)).token);
  const mallory = await provider.mint({ sub: 'mallory', aud: s.arbor.config.issuerUrl });
  await t.throwsAsync(exchangeAtSts(s.url, identity, mallory, s.arbor.config.issuerUrl), {
    message: /exchange refused \(403\)/,
  });
});
