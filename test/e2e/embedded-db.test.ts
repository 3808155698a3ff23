import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadSigningKeys } from '../../src/auth/signing-keys.js';
import { TokenIssuer } from '../../src/auth/token-issuer.js';
import { freePort, startArborProcess, type ArborProcess } from '../helpers/process.js';

/**
 * The embedded database beside a running server: every command either goes through the
 * server's API or refuses with the owner's pid, nothing is lost, and backups round-trip.
 */

const ADMIN = 'embedded-db-admin-token-0123456789';
const ISSUER = 'http://arbor.test';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function arbor(args: string[], env: Record<string, string>): Promise<Run> {
  const clean = { ...process.env };
  for (const k of ['ARBOR_API_URL', 'ARBOR_TOKEN', 'DATABASE_URL']) delete clean[k];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import=tsx', 'src/main.ts', ...args],
      { env: { ...clean, LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function envFor(dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    ARBOR_ADMIN_TOKEN: ADMIN,
    ARBOR_ISSUER_URL: ISSUER,
    ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
    XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'arbor-xdg-')),
  };
}

async function call(server: ArborProcess, path: string, init: RequestInit = {}, token = ADMIN) {
  const r = await fetch(server.url + path, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

async function stopped(server: ArborProcess): Promise<number | null> {
  await server.stop('SIGTERM');
  return server.child.exitCode;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

test('every command beside a running PGlite server goes through its API or refuses clearly', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-edb-'));
  const env = envFor(dataDir);
  const server = await startArborProcess(env);
  t.teardown(() => server.stop('SIGKILL'));
  const pid = server.child.pid!;
  const org = await call(server, '/iam/v2beta1/groups', {
    method: 'POST',
    body: JSON.stringify({ name: 'acme' }),
  });
  t.is(org.status, 200);

  // Through the API, found by themselves from the data directory's lock.
  const imported = await arbor(['import-advisories', 'test/fixtures/osv'], env);
  t.is(imported.code, 0, imported.stderr);
  t.regex(imported.stdout, /imported 5 records from 4 files: 5 created/);
  t.regex(imported.stderr, /going through its API/);
  t.regex(imported.stderr, /import-advisories: write: 4\/4 files/);
  const status = await arbor(['status'], env);
  t.is(status.code, 0, status.stderr);
  t.regex(status.stdout, /database: pglite \(served by http/);
  t.regex(status.stdout, /pending: \(none\)/);
  const exported = await arbor(['export', '--group', org.body.uid], env);
  t.is(exported.code, 0, exported.stderr);
  t.regex(exported.stdout, new RegExp(`adoptUid: ${org.body.uid}`));
  const reseal = await arbor(['secret-key', 'reseal'], env);
  t.is(reseal.code, 0, reseal.stderr);
  t.regex(reseal.stdout, /resealed: 0/);
  const file = join(dataDir, '..', `${Date.now()}-backup.tar`);
  const backup = await arbor(['backup', file], env);
  t.is(backup.code, 0, backup.stderr);
  t.true(existsSync(file));
  // The same, named explicitly; a refusal of the API is said as such.
  const explicit = await arbor(['status', '--api', server.url], { ...env, ARBOR_ADMIN_TOKEN: '' });
  t.not(explicit.code, 0);
  t.regex(explicit.stderr, /not signed in to http/);

  // Refused, touching nothing: they would open the files themselves.
  // Each is told what it can do: none of them has --api.
  for (const [args, advice] of [
    [['migrate'], /stop it first \(the server applies pending migrations itself/],
    [['restore', file], /stop it first: a restore replaces the files it has open/],
    [['serve'], /stop it, or give this one another DATA_DIR/],
  ] as const) {
    const port = await freePort();
    const r = await arbor([...args], { ...env, PORT: String(port) });
    t.is(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, new RegExp(`the server \\(pid ${pid}\\) has the data directory`));
    t.regex(r.stderr, advice, args.join(' '));
    t.notRegex(r.stderr, /--api/, `${args.join(' ')} has no --api`);
    t.notRegex(r.stderr, /\n\s+at /, 'no stack trace');
    t.false(await listening(port), `${args.join(' ')} bound no port`);
  }
  // Offline by nature: no database.
  t.is((await arbor(['secret-key', 'new'], env)).code, 0);
  t.is((await arbor(['completion', 'bash'], env)).code, 0);
  t.is((await arbor(['--version'], env)).code, 0);
  const who = await arbor(['auth', 'status', '--api', server.url], env);
  t.is(who.code, 1);
  t.regex(who.stderr, /Not signed in/);
  // The reconciler needs a cluster; without one it stops before opening anything.
  const reconcile = await arbor(['reconcile'], { ...env, KUBECONFIG: join(dataDir, 'none') });
  t.not(reconcile.code, 0);

  // Nothing lost, still serving, and a clean stop.
  const advisories = await call(server, '/vulnerabilities/v2beta1/advisories');
  t.is(advisories.body.totalCount, '5');
  t.is((await call(server, `/iam/v2beta1/groups/${org.body.uid}`)).status, 200);
  t.is(await stopped(server), 0, server.logs());
  t.notRegex(server.logs(), /Infinity|Unhandled/);
  // Without the server, the commands open the database themselves.
  const offline = await arbor(['status'], env);
  t.is(offline.code, 0, offline.stderr);
  t.regex(offline.stdout, /^applied: 0001-groups/);
});

test('backup and restore: a restored instance serves the same data and accepts the same tokens', async (t) => {
  const a = mkdtempSync(join(tmpdir(), 'arbor-edb-a-'));
  const envA = envFor(a);
  const first = await startArborProcess(envA);
  t.teardown(() => first.stop('SIGKILL'));
  const org = await call(first, '/iam/v2beta1/groups', {
    method: 'POST',
    body: JSON.stringify({ name: 'acme', description: 'kept' }),
  });
  const identity = await call(first, `/iam/v2beta1/identities/${org.body.uid}`, {
    method: 'POST',
    body: JSON.stringify({
      name: 'ci',
      claimMatch: { issuer: 'https://token.example.com', subject: 'ci' },
    }),
  });
  t.is(identity.status, 200, JSON.stringify(identity.body));
  const viewer = await call(first, '/iam/v2beta1/roles?name=viewer');
  const binding = await call(first, `/iam/v2beta1/roleBindings/${org.body.uid}`, {
    method: 'POST',
    body: JSON.stringify({ identityUid: identity.body.uid, roleUid: viewer.body.roles[0].uid }),
  });
  t.is(binding.status, 200, JSON.stringify(binding.body));
  t.is((await arbor(['import-advisories', 'test/fixtures/osv'], envA)).code, 0);
  // A token signed by this instance's key, as the STS would sign it.
  const issuer = new TokenIssuer(ISSUER, ISSUER, await loadSigningKeys(join(a, 'keys')));
  const { token } = await issuer.sign(identity.body.uid, { iss: ISSUER, sub: identity.body.uid });
  const seen = await call(first, '/iam/v2beta1/groups', {}, token);
  t.is(seen.status, 200);
  const bindings = `/iam/v2beta1/roleBindings?uidp.descendants_of=${org.body.uid}`;
  const bound = await call(first, bindings, {}, token);
  t.is(bound.body.roleBindings.length, 1);

  const file = join(a, '..', `${Date.now()}-roundtrip.tar`);
  const backup = await arbor(['backup', file], envA); // online: through the running server
  t.is(backup.code, 0, backup.stderr);
  t.regex(backup.stdout, /2 key files/);
  t.is(await stopped(first), 0);

  const b = mkdtempSync(join(tmpdir(), 'arbor-edb-b-'));
  const envB = envFor(b);
  const restored = await arbor(['restore', file], envB);
  t.is(restored.code, 0, restored.stderr);
  t.is((await arbor(['restore', file], envB)).code, 1, 'a second restore needs --force');
  const second = await startArborProcess(envB);
  t.teardown(() => second.stop('SIGKILL'));
  t.deepEqual((await call(second, '/iam/v2beta1/groups', {}, token)).body, seen.body);
  t.deepEqual((await call(second, bindings, {}, token)).body, bound.body);
  t.is((await call(second, '/vulnerabilities/v2beta1/advisories')).body.totalCount, '5');
  t.is(await stopped(second), 0);
});
