import { decodeJwt } from 'jose';
import { browserTest, openBrowser, screenshot, type Browser } from '../helpers/browser.js';
import { startConsoleWorld, type ConsoleWorld } from '../helpers/console-world.js';
import { LoginIssuer } from '../helpers/oidc-login-issuer.js';

/**
 * Signing in to the console through the server's login provider, as `arbor auth login`
 * does: the provider published at /.well-known/arbor-login, authorization code + PKCE with
 * state and nonce, back to /console/callback, the ID token traded at /sts/exchange for an
 * API token of the person's own identity. The provider is a real OIDC server on loopback
 * on another origin, so the console's CSP must allow exactly its origin for the token call.
 */
const test = browserTest();

let login: LoginIssuer;
let w: ConsoleWorld;
let b: Browser;

test.before(async () => {
  login = await LoginIssuer.start();
  w = await startConsoleWorld({
    ARBOR_LOGIN_ISSUER: login.url,
    ARBOR_LOGIN_CLIENT_ID: 'arbor-console',
  });
  b = await openBrowser();
});

test.after.always(async () => {
  await b?.close();
  await w?.close();
  await login?.stop();
});

test('sign in through the login provider with PKCE; the person gets their own identity', async (t) => {
  const page = b.page;
  login.person = { sub: 'carol', email: 'carol@example.com', name: 'Carol' };
  await page.goto(`${w.s.url}/console/`);
  await page.getByRole('button', { name: 'Sign in with the login provider' }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  // The code and state are gone from the address bar; the token is in the tab only.
  t.is(new URL(page.url()).pathname, '/console/');
  t.is(new URL(page.url()).search, '');
  t.is(login.tokenRequests, 1);
  const token = (await page.evaluate('sessionStorage.getItem("arbor.console.token")')) as string;
  t.truthy(token);
  t.deepEqual(await b.context.cookies(), []);
  const sub = String(decodeJwt(token).sub);
  t.regex(sub, /^[0-9a-f]{40}(\/[0-9a-f]{16})*$/);
  // The header names the person: by the identity's name where it may read itself, else by
  // its uid (the end shown, the whole in the title), never a bare "Signed in".
  const who = page.locator('.who');
  await who.locator('strong, code').waitFor();
  if (await who.locator('strong').count()) t.is(await who.locator('strong').textContent(), 'Carol');
  else t.is(await who.locator('code').getAttribute('title'), sub);
  // The token is an Arbor API token the API accepts, for the person the provider named.
  const me = await w.s.admin.get(`/iam/v2beta1/identities/${sub}`);
  t.is(me.status, 200);
  t.like(me.body, { name: 'Carol', claimMatch: { issuer: login.url, subject: 'carol' } });
  t.deepEqual(b.incidents, []);
  await screenshot(page, 'signed-in-with-provider');
});

test('a callback the tab did not start signs no one in', async (t) => {
  const page = b.page;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`${w.s.url}/console/callback?code=forged&state=forged`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.regex((await alert.textContent()) ?? '', /No sign-in was started in this tab/);
  t.is(await page.evaluate('sessionStorage.getItem("arbor.console.token")'), null);
  t.is(login.tokenRequests, 1);
});
