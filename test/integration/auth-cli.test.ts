import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { decodeJwt } from 'jose';
import { authorize, browser, runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { LoginIssuer } from '../helpers/oidc-login-issuer.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor auth …` run as a process against a real Arbor and a loopback OIDC provider; the
 * browser step is an HTTP client following the provider's redirect (spec §5.2).
 */
const CLIENT = 'arbor-cli';

let s: TestServer;
let idp: LoginIssuer;
let config: string;
let org: string;

test.before(async () => {
  idp = await LoginIssuer.start();
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_LOGIN_ISSUER: idp.url,
    ARBOR_LOGIN_CLIENT_ID: CLIENT,
  });
  org = await createGroup(s.admin, 'cli-org');
  config = mkdtempSync(join(tmpdir(), 'arbor-cli-config-'));
});
test.after.always(async () => {
  await idp?.stop();
  await s?.close();
  rmSync(config, { recursive: true, force: true });
});

/** Run `arbor auth …` against the test server, with the login settings in the environment. */
function arbor(
  args: string[],
  onUrl?: (url: string) => Promise<string | undefined>,
  xdg = config,
): Promise<CliRun> {
  const env = {
    HOME: xdg,
    XDG_CONFIG_HOME: xdg,
    ARBOR_API_URL: s.url,
    ARBOR_LOGIN_ISSUER: idp.url,
    ARBOR_LOGIN_CLIENT_ID: CLIENT,
  };
  return runArbor(['auth', ...args], env, onUrl);
}

const credentials = () =>
  JSON.parse(readFileSync(join(config, 'arbor', 'credentials.json'), 'utf8')) as {
    entries: Record<string, { token: string; expiry: string; refreshToken?: string }>;
  };

test.serial(
  'cli: login in the browser keeps a 0600 entry; token and status show the person',
  async (t) => {
    const login = await arbor(['login', '--no-browser'], browser);
    t.is(login.code, 0, login.stderr);
    t.regex(login.stderr, /code_challenge_method=S256/);
    t.regex(login.stderr, /nonce=/);
    const file = join(config, 'arbor', 'credentials.json');
    t.is(statSync(file).mode & 0o777, 0o600);
    t.is(statSync(join(config, 'arbor')).mode & 0o777, 0o700);
    t.deepEqual(Object.keys(credentials().entries), [s.url]);

    const token = await arbor(['token']);
    t.is(token.code, 0, token.stderr);
    const claims = decodeJwt(token.stdout.trim());
    t.regex(String(claims.sub), /^[0-9a-f]{40}$/);
    t.like(claims, { act: { iss: idp.url, sub: 'alice' } });
    const api = await s.client(token.stdout.trim()).get('/iam/v2beta1/groups');
    t.is(api.status, 200);

    const status = await arbor(['status']);
    t.is(status.code, 0);
    t.true(status.stdout.includes(String(claims.sub)));
    t.regex(status.stdout, /\(Alice\)/);
    t.false(status.stdout.includes(token.stdout.trim()), 'status never prints the whole token');
  },
);

test.serial(
  'cli: token refreshes an expired API token, and asks for a login once the session ended',
  async (t) => {
    const before = credentials().entries[s.url]!;
    const file = join(config, 'arbor', 'credentials.json');
    const expire = () => {
      const c = credentials();
      c.entries[s.url]!.expiry = new Date(Date.now() - 1000).toISOString();
      writeFileSync(file, JSON.stringify(c), { mode: 0o600 });
    };
    expire();
    const refreshed = await arbor(['token']);
    t.is(refreshed.code, 0, refreshed.stderr);
    t.not(refreshed.stdout.trim(), before.token);
    t.is(decodeJwt(refreshed.stdout.trim()).sub, decodeJwt(before.token).sub);
    t.not(
      credentials().entries[s.url]!.refreshToken,
      before.refreshToken,
      'rotated refresh token kept',
    );

    idp.refreshTokens.clear(); // the provider ends the session
    expire();
    const ended = await arbor(['token']);
    t.is(ended.code, 1);
    t.regex(ended.stderr, /expired: run arbor auth login/);
    t.is(ended.stdout, '');
  },
);

test.serial('cli: --headless reads back the address the browser ended on', async (t) => {
  idp.person = { sub: 'bob', email: 'bob@example.com', name: 'Bob' };
  const login = await arbor(['login', '--headless'], authorize);
  t.is(login.code, 0, login.stderr);
  t.regex(login.stderr, /redirect_uri=http%3A%2F%2F127\.0\.0\.1%2Fcallback/);
  const token = await arbor(['token']);
  t.like(decodeJwt(token.stdout.trim()), { act: { sub: 'bob' } });
  // A pasted address with a forged state is refused.
  const forged = await arbor(['login', '--headless'], async (url) => {
    const back = new URL(await authorize(url));
    back.searchParams.set('state', 'forged');
    return back.toString();
  });
  t.is(forged.code, 1);
});

test.serial(
  'cli: login --invite binds the person with the invite’s role, exactly once',
  async (t) => {
    idp.person = { sub: 'carol', email: 'carol@example.com', name: 'Carol' };
    const invite = await s.admin.post(`/iam/v2beta1/groupInvites/${org}`, {
      roleUid: await builtinRoleUid(s.admin, 'viewer'),
      ttl: '3600s',
      singleUse: true,
    });
    t.is(invite.status, 200);
    const login = await arbor(['login', '--no-browser', '--invite', invite.body.code], browser);
    t.is(login.code, 0, login.stderr);
    t.regex(login.stderr, /Invite redeemed: viewer/);
    const token = (await arbor(['token'])).stdout.trim();
    const groups = await s.client(token).get('/iam/v2beta1/groups');
    t.deepEqual(
      groups.body.groups.map((g: { uid: string }) => g.uid),
      [org],
    );
    const again = await arbor(['login', '--no-browser', '--invite', invite.body.code], browser);
    t.is(again.code, 1);
    t.regex(again.stderr, /invite was refused \(400\)/);
  },
);

test.serial('cli: an untrusted provider registers no one; logout forgets the entry', async (t) => {
  const other = await LoginIssuer.start();
  try {
    const login = await arbor(
      ['login', '--no-browser', '--issuer', other.url, '--client-id', CLIENT],
      browser,
    );
    t.is(login.code, 1);
    t.regex(login.stderr, /refused the sign-in \(403\)/);
  } finally {
    await other.stop();
  }
  const out = await arbor(['logout']);
  t.is(out.code, 0);
  t.deepEqual(credentials().entries, {});
  const token = await arbor(['token']);
  t.is(token.code, 1);
  t.regex(token.stderr, /Not signed in/);
});
