import test from 'ava';
import { decodeJwt } from 'jose';
import { exchangeIdToken } from '../../src/cli/auth-exchange.js';
import { oidcSignIn } from '../../src/cli/auth-oidc.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { LoginIssuer } from '../helpers/oidc-login-issuer.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * The CLI's sign-in pieces called in process (auth-cli.test.ts runs them as `arbor auth`):
 * the loopback flow of `oidcSignIn`, and `exchangeIdToken` trading a workload's ID token
 * for one identity at the STS.
 */
let s: TestServer;
let provider: TestIssuer;
let idp: LoginIssuer;
let identity: string;

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  provider = await TestIssuer.start();
  idp = await LoginIssuer.start();
  const org = await createGroup(s.admin, 'login-org');
  identity = await createIdentity(s.admin, org, 'alice', {
    issuer: provider.url,
    subject: 'alice',
  });
});
test.after.always(async () => {
  await idp?.stop();
  await provider?.stop();
  await s?.close();
});

test('login: browser flow with PKCE on a loopback redirect yields the provider’s ID token', async (t) => {
  const signedIn = await oidcSignIn(
    { issuer: idp.url, clientId: 'arbor-cli' },
    {
      // Stand in for the browser: follow the authorization redirect back to the CLI.
      onAuthorizeUrl: (url) => {
        t.regex(url, /code_challenge_method=S256/);
        t.regex(url, /redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback/);
        void fetch(url);
      },
      timeoutMs: 10_000,
    },
  );
  t.is(decodeJwt(signedIn.idToken).sub, 'alice');
  t.is(signedIn.claims.sub, 'alice');
});

test('login: a loopback callback with the wrong state is refused', async (t) => {
  const e = await t.throwsAsync(
    oidcSignIn(
      { issuer: idp.url, clientId: 'arbor-cli' },
      {
        onAuthorizeUrl: (url) => {
          const redirect = new URL(new URL(url).searchParams.get('redirect_uri')!);
          redirect.searchParams.set('code', 'stolen');
          redirect.searchParams.set('state', 'forged');
          void fetch(redirect);
        },
        timeoutMs: 10_000,
      },
    ),
    { code: 'OAUTH_INVALID_RESPONSE' },
  );
  // The provider never saw this code: the forged state is refused before any exchange.
  t.regex(String((e?.cause as { message?: string } | undefined)?.message ?? e?.cause), /state/);
});

test('login: an ID token is exchanged for the identity it matches, and a foreign one is refused', async (t) => {
  const aud = s.arbor.config.issuerUrl;
  const pasted = await provider.mint({ sub: 'alice', aud });
  const { token } = await exchangeIdToken(s.url, aud, pasted, identity);
  t.is(decodeJwt(token).sub, identity);
  const mallory = await provider.mint({ sub: 'mallory', aud });
  await t.throwsAsync(exchangeIdToken(s.url, aud, mallory, identity), {
    message: /refused the sign-in \(403\)/,
  });
});
