import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor } from '../helpers/cli-run.js';
import { freePort, startArborProcess, type ArborProcess } from '../helpers/process.js';

/**
 * A first run signs you in: `arbor serve` with nothing configured (the embedded
 * database, no admin token, no login provider, not production, not in a pod) prints one
 * line with a sign-in token made for this run; any other configuration prints none, and a
 * token of an earlier run is refused. The line goes to a terminal only: with stdout a file
 * or a pipe (a journal, `nohup`, CI logs) it once leaked the admin token to whoever reads
 * those, so the token is then written to a 0600 file in DATA_DIR and only its path is
 * logged. A development run listens on loopback only (unless HOST is set), and its line
 * names ARBOR_API_URL too when the CLI's default would not reach it.
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

const TOKEN_IN_LINE = /^export (?:ARBOR_API_URL=\S+ )?ARBOR_TOKEN=(arbor-dev-[A-Za-z0-9_-]{43})$/m;

/** The sign-in file the log line names: mode 0600, and the token in it. */
function signInFile(arbor: ArborProcess): {
  file: string;
  mode: number;
  text: string;
  token: string;
} {
  const line = arbor.lines().find((l) => String(l.msg).startsWith('Sign in'));
  const file = String(line?.file);
  const text = readFileSync(file, 'utf8');
  return {
    file,
    mode: statSync(file).mode & 0o777,
    text,
    token: TOKEN_IN_LINE.exec(text)![1]!,
  };
}

async function serve(dataDir: string, env: Record<string, string> = {}): Promise<ArborProcess> {
  // Generous: a fresh embedded database migrates slowly on a loaded machine.
  const arbor = await startArborProcess(
    { ...DEV, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    300_000,
  );
  // The line follows the start-up banner.
  await arbor.waitForLog(/serving at/, 30_000);
  return arbor;
}

const roles = (url: string, token: string) =>
  fetch(`${url}/iam/v2beta1/roles?page_size=1`, { headers: { authorization: `Bearer ${token}` } });

test.serial(
  'dev run, stdout not a terminal: no token on stdout; a 0600 file in DATA_DIR holds it and signs in as the admin (API and CLI)',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-dev-sign-in-'));
    let arbor: ArborProcess | undefined;
    try {
      arbor = await serve(dataDir);
      await arbor.waitForLog(/"msg":"Sign in/, 10_000);
      const { file, mode, text, token } = signInFile(arbor);
      t.is(file, join(dataDir, 'sign-in.sh'));
      t.is(mode, 0o600);
      // Nothing of it on stdout or stderr, the path only.
      t.false(arbor.logs().includes(token), 'the token reached stdout');
      t.notRegex(arbor.logs(), /arbor-dev-[A-Za-z0-9_-]{43}/);
      t.false(
        arbor
          .logs()
          .split('\n')
          .some((l) => l.startsWith('Sign in')),
      );
      t.regex(
        text,
        /^# The console: http:\/\/127\.0\.0\.1:\d+\/console\/#token=arbor-dev-|not built/m,
      );
      // The banner is a log line.
      t.true(arbor.lines().some((l) => /^Arbor .* serving at http/.test(String(l.msg))));

      t.is((await roles(arbor.url, token)).status, 200);
      // Reusable within the run: the console sends it with every request.
      t.is((await roles(arbor.url, token)).status, 200);
      // One character off, or no prefix, is refused.
      const last = token.at(-1) === 'A' ? 'B' : 'A';
      t.is((await roles(arbor.url, token.slice(0, -1) + last)).status, 401);
      t.is((await roles(arbor.url, token.slice('arbor-dev-'.length))).status, 401);

      // The CLI with exactly what the file says (sourced by a shell): the admin.
      const who = await runShell(`. ${file} && ${CLI} whoami`, { HOME: dataDir });
      t.is(who.code, 0, who.out);

      // A restart voids it: the next run makes another and refuses this one; a stop removes
      // the file.
      t.is(await arbor.stop('SIGTERM'), 0);
      t.false(existsSync(file), 'a stopped run left its sign-in file');
      arbor = await serve(dataDir);
      await arbor.waitForLog(/"msg":"Sign in/, 10_000);
      t.not(signInFile(arbor).token, token);
      t.is((await roles(arbor.url, token)).status, 401);
      // Production on the same data: no token, and the token of the dev run is refused.
      t.is(await arbor.stop('SIGTERM'), 0);
      arbor = await serve(dataDir, { NODE_ENV: 'production' });
      await new Promise((r) => setTimeout(r, 300));
      t.notRegex(arbor.logs(), /ARBOR_TOKEN=|Sign in/);
      t.false(existsSync(file));
      t.is((await roles(arbor.url, token)).status, 401);
    } finally {
      arbor?.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

/** This checkout's CLI, as a shell command. */
const CLI = `${JSON.stringify(process.execPath)} --import=tsx src/main.ts`;

/** `command` in sh with PATH and `env` only (the test's ARBOR_* are not inherited). */
function runShell(
  command: string,
  env: Record<string, string>,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => resolve({ code: code ?? -1, out }));
  });
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function outsideAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

test.serial(
  'dev run on a terminal, on a non-default port: its Sign in line alone makes the CLI work; it listens on loopback only',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-dev-sign-in-tty-'));
    const port = await freePort();
    // `script` gives the server a terminal for stdout, as a person's shell would. No HOST.
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    delete env.HOST;
    const child = spawn('script', ['-qfec', `${CLI} serve`, '/dev/null'], {
      env: {
        ...env,
        ...DEV,
        LOG_FORMAT: '',
        PORT: String(port),
        DATA_DIR: dataDir,
        METRICS_PORT: '0',
        ARBOR_WORKERS: '1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const deadline = Date.now() + 120_000;
      while (!/^Sign in.*$/m.test(out) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      // eslint-disable-next-line no-control-regex
      const plain = out.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
      const line = /^Sign in.*$/m.exec(plain)?.[0];
      t.truthy(line, plain);
      const exports = /for the CLI: export (ARBOR_API_URL=(\S+)) (ARBOR_TOKEN=(\S+?))\)?$/.exec(
        line!,
      );
      t.truthy(exports, line);
      t.is(exports![2], `http://127.0.0.1:${port}`);
      // Exactly what the line says, and nothing else of the test's environment.
      const who = await runArbor(['whoami'], {
        ARBOR_API_URL: exports![2]!,
        ARBOR_TOKEN: exports![4]!,
        HOME: dataDir,
      });
      t.is(who.code, 0, who.stderr);
      t.false(existsSync(join(dataDir, 'sign-in.sh')), 'a terminal got the line: no file');
      // Loopback only: another address of this machine is refused.
      const outside = outsideAddress();
      if (outside === undefined) t.log('no non-loopback address here: that half is not tried');
      else {
        const reached = await fetch(`http://${outside}:${port}/healthz`).then(
          () => true,
          () => false,
        );
        t.false(reached, `a development run answered on ${outside}`);
      }
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

for (const [what, env] of [
  ['an admin token', { ARBOR_ADMIN_TOKEN: 'dev-sign-in-admin-token-0123456789' }],
  ['a Kubernetes pod', { KUBERNETES_SERVICE_HOST: '10.0.0.1', ARBOR_SHUTDOWN_DELAY_SECONDS: '0' }],
  // Any NODE_ENV but unset, development or test says this is no laptop.
  ['NODE_ENV=prod', { NODE_ENV: 'prod' }],
] as const) {
  test.serial(`not a dev run with ${what}: no sign-in line`, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-dev-sign-in-'));
    const arbor = await serve(dataDir, env);
    try {
      await new Promise((r) => setTimeout(r, 300));
      t.notRegex(arbor.logs(), /ARBOR_TOKEN=|Sign in/);
      t.true(arbor.lines().some((l) => l.devSignIn === false));
      t.false(existsSync(join(dataDir, 'sign-in.sh')));
    } finally {
      arbor.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
