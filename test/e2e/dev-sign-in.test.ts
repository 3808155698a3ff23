import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor } from '../helpers/cli-run.js';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';

/**
 * A first run signs you in (issue 38): `arbor serve` with nothing configured (the embedded
 * database, no admin token, no login provider, not production, not in a pod) prints one
 * line with a sign-in token made for this run; any other configuration prints none, and a
 * token of an earlier run is refused.
 */

/** Everything that would make it not a development run, unset (the test's own env aside). */
const DEV: Record<string, string> = {
  DATABASE_URL: '',
  ARBOR_ADMIN_TOKEN: '',
  ARBOR_LOGIN_ISSUER: '',
  ARBOR_LOGIN_CLIENT_ID: '',
  NODE_ENV: '',
  KUBERNETES_SERVICE_HOST: '',
  LOG_FORMAT: 'json',
};

const TOKEN_IN_LINE = /^Sign in.*export ARBOR_TOKEN=(arbor-dev-[A-Za-z0-9_-]{43})\)?$/m;

async function serve(dataDir: string, env: Record<string, string> = {}): Promise<ArborProcess> {
  const arbor = await startArborProcess({ ...DEV, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env });
  // The line follows the start-up banner.
  await arbor.waitForLog(/serving at/, 30_000);
  return arbor;
}

const roles = (url: string, token: string) =>
  fetch(`${url}/iam/v2beta1/roles?page_size=1`, { headers: { authorization: `Bearer ${token}` } });

test.serial(
  'dev run: one line with a sign-in token that signs in as the admin (API and CLI), kept out of the JSON logs',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-dev-sign-in-'));
    let arbor: ArborProcess | undefined;
    try {
      arbor = await serve(dataDir);
      await arbor.waitForLog(TOKEN_IN_LINE, 10_000);
      const lines = arbor.logs().split('\n');
      const signIn = lines.filter((l) => l.startsWith('Sign in'));
      t.is(signIn.length, 1, 'one human line');
      const token = TOKEN_IN_LINE.exec(arbor.logs())![1]!;
      // The banner is a log line; the token is in no log line.
      t.true(arbor.lines().some((l) => /^Arbor .* serving at http/.test(String(l.msg))));
      t.false(
        lines.some((l) => l.startsWith('{') && l.includes(token)),
        'the token is never logged',
      );

      t.is((await roles(arbor.url, token)).status, 200);
      // Reusable within the run: the console sends it with every request.
      t.is((await roles(arbor.url, token)).status, 200);
      // One character off, or no prefix, is refused.
      const last = token.at(-1) === 'A' ? 'B' : 'A';
      t.is((await roles(arbor.url, token.slice(0, -1) + last)).status, 401);
      t.is((await roles(arbor.url, token.slice('arbor-dev-'.length))).status, 401);

      // The CLI with the token the line names: the admin, so can-i answers yes.
      const env = { ARBOR_API_URL: arbor.url, ARBOR_TOKEN: token, HOME: dataDir };
      const who = await runArbor(['whoami'], env);
      t.is(who.code, 0, who.stderr);

      // A restart voids it: the next run makes another and refuses this one.
      t.is(await arbor.stop('SIGTERM'), 0);
      arbor = await serve(dataDir);
      await arbor.waitForLog(TOKEN_IN_LINE, 10_000);
      t.not(TOKEN_IN_LINE.exec(arbor.logs())![1], token);
      t.is((await roles(arbor.url, token)).status, 401);
      // Production on the same data: no line, and the token of the dev run is refused.
      t.is(await arbor.stop('SIGTERM'), 0);
      arbor = await serve(dataDir, { NODE_ENV: 'production' });
      await new Promise((r) => setTimeout(r, 300));
      t.notRegex(arbor.logs(), /ARBOR_TOKEN=|Sign in/);
      t.is((await roles(arbor.url, token)).status, 401);
    } finally {
      arbor?.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

for (const [what, env] of [
  ['an admin token', { ARBOR_ADMIN_TOKEN: 'dev-sign-in-admin-token-0123456789' }],
  ['a Kubernetes pod', { KUBERNETES_SERVICE_HOST: '10.0.0.1', ARBOR_SHUTDOWN_DELAY_SECONDS: '0' }],
] as const) {
  test.serial(`not a dev run with ${what}: no sign-in line`, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-dev-sign-in-'));
    const arbor = await serve(dataDir, env);
    try {
      await new Promise((r) => setTimeout(r, 300));
      t.notRegex(arbor.logs(), /ARBOR_TOKEN=|Sign in/);
      t.true(arbor.lines().some((l) => l.devSignIn === false));
    } finally {
      arbor.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
