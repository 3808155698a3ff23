import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { decodeJwt } from 'jose';
import { freePort } from '../helpers/process.js';
import { browser, runArbor, type CliRun } from '../helpers/cli-run.js';
import { LoginIssuer } from '../helpers/oidc-login-issuer.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * The CLI as a person uses it, as a process against a real Arbor (PGlite or PostgreSQL,
 * by ARBOR_TEST_DB) and a loopback OIDC provider: log in knowing only the API address,
 * build an org tree, bind, list as a table and as JSON, tree, whoami, log out.
 */
let s: TestServer;
let idp: LoginIssuer;
let home: string;

test.before(async () => {
  idp = await LoginIssuer.start();
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_LOGIN_ISSUER: idp.url,
    ARBOR_LOGIN_CLIENT_ID: 'arbor-cli',
  });
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-home-'));
});
test.after.always(async () => {
  await idp?.stop();
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

type Run = CliRun;

/** `arbor <args>` with only what a person has (HOME, PATH) plus `env`; logins browse at once. */
function arbor(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runArbor(args, { HOME: home, XDG_CONFIG_HOME: home, ...env }, browser);
}

const admin = { ARBOR_TOKEN: ADMIN_TOKEN };
const api = () => ['--api', s.url];
const ok = (t: { is(a: unknown, b: unknown, m?: string): void }, r: Run) =>
  t.is(r.code, 0, `exit ${r.code}: ${r.stderr}`);

test.serial('cli: a person logs in, builds a tree, binds, lists, draws it, logs out', async (t) => {
  // The administrator makes the organization (root groups take the admin token).
  const org = await arbor(['groups', 'create', '--name', 'acme', '-o', 'name', ...api()], admin);
  ok(t, org);
  const ORG = org.stdout.trim();
  t.regex(ORG, /^[0-9a-f]{40}$/);

  // Only the address: the provider comes from the server's /.well-known/arbor-login.
  const login = await arbor(['auth', 'login', '--no-browser', ...api()]);
  ok(t, login);
  // Named once: the person's identity is named as the provider named them.
  t.regex(login.stderr, /Signed in to \S+ as Alice; /);
  const issued = decodeJwt((await arbor(['auth', 'token', ...api()])).stdout.trim());
  const me = issued.sub as string;

  // A new person holds nothing: the admin makes them owner of the organization.
  const owner = await arbor(['roles', 'list', '--name', 'owner', '-o', 'name', ...api()], admin);
  ok(t, owner);
  const bind = await arbor(
    ['role-bindings', 'create', '--parent', ORG, '--identity', me, '--role', owner.stdout.trim()],
    { ...admin, ARBOR_API_URL: s.url },
  );
  ok(t, bind);
  t.regex(bind.stdout, /^IDENTITY\s+ROLE\s+GROUP\s+UID\n/);

  // From here on the person's own login speaks (no ARBOR_TOKEN).
  const env = { ARBOR_API_URL: s.url };
  const platform = await arbor(
    ['groups', 'create', '--parent', ORG, '--name', 'platform', '-o', 'name'],
    env,
  );
  ok(t, platform);
  ok(t, await arbor(['groups', 'create', '--parent', ORG, '--name', 'security'], env));
  const PLATFORM = platform.stdout.trim();
  const ci = await arbor(
    [
      'identities',
      'create',
      '--parent',
      PLATFORM,
      '--name',
      'ci',
      '-o',
      'name',
      '-f',
      writeBody({
        claimMatch: {
          issuer: 'https://token.actions.githubusercontent.com',
          subject: 'repo:acme/app',
        },
      }),
    ],
    env,
  );
  ok(t, ci);
  const viewer = (
    await arbor(['roles', 'list', '--name', 'viewer', '-o', 'name'], env)
  ).stdout.trim();
  ok(
    t,
    await arbor(
      [
        'role-bindings',
        'create',
        '--parent',
        PLATFORM,
        '--identity',
        ci.stdout.trim(),
        '--role',
        viewer,
      ],
      env,
    ),
  );

  // A table that fits 80 columns, and the same list as JSON.
  const table = await arbor(['groups', 'list', '--descendants-of', ORG, '--order-by', 'name'], env);
  ok(t, table);
  const lines = table.stdout.trimEnd().split('\n');
  t.regex(lines[0]!, /^NAME\s+UID$/, 'an empty DESCRIPTION column is left out');
  t.deepEqual(
    lines.slice(1).map((l) => l.split(/\s+/)[0]),
    ['platform', 'security'],
  );
  for (const l of lines) t.true(l.length <= 80, `"${l}" fits 80 columns`);
  const json = await arbor(['groups', 'list', '--parent', ORG, '--all', '-o', 'json'], env);
  ok(t, json);
  const groups = JSON.parse(json.stdout) as Array<{ uid: string; name: string }>;
  t.deepEqual(groups.map((g) => g.name).sort(), ['platform', 'security']);
  t.true(groups.some((g) => g.uid === PLATFORM));
  // Pages: one page of one, then --all walks them all.
  const page = await arbor(
    ['groups', 'list', '--parent', ORG, '--page-size', '1', '-o', 'name'],
    env,
  );
  t.is(page.stdout.trim().split('\n').length, 1);
  t.regex(page.stderr, /--page-token \S+/);
  const every = await arbor(
    ['groups', 'list', '--parent', ORG, '--page-size', '1', '--all', '-o', 'name'],
    env,
  );
  t.is(every.stdout.trim().split('\n').length, 2);
  const yaml = await arbor(['role-bindings', 'list', '--group', PLATFORM, '-o', 'yaml'], env);
  ok(t, yaml);
  t.regex(yaml.stdout, /^- uid: /);
  t.regex(yaml.stdout, /name: viewer/);

  // The tree, with counts.
  const tree = await arbor(['tree', ORG], env);
  ok(t, tree);
  t.is(
    tree.stdout,
    'acme  (2 groups, 1 binding)\n├── platform  (1 identity, 1 binding)\n└── security\n',
  );

  // whoami: the person, the binding the admin made, the token's expiry.
  const who = await arbor(['whoami'], env);
  ok(t, who);
  t.regex(who.stdout, new RegExp(`identity:  Alice ${me}`));
  t.regex(who.stdout, new RegExp(`owner at acme  ${ORG}`));
  // The minutes left as whoami says them, against the token's own exp (however long the
  // steps above took on a loaded machine).
  const left = /token: {5}from arbor auth login, expires \S+ \(in (\d+) min\)/.exec(who.stdout);
  t.truthy(left, who.stdout);
  const expected = ((issued.exp as number) * 1000 - Date.now()) / 60_000;
  t.true(Math.abs(Number(left![1]) - expected) <= 1.5, `${left![1]} min, ${expected} expected`);
  const whoJson = JSON.parse((await arbor(['whoami', '-o', 'json'], env)).stdout) as {
    identity: { uid: string };
    bindings: unknown[];
  };
  t.is(whoJson.identity.uid, me);
  t.is(whoJson.bindings.length, 1);
  // A binding below the organization is shown at its group's path, not its bare name (the
  // admin makes it: a person may not list its own root-level identity to bind it).
  const mine = await arbor(
    [
      'role-bindings',
      'create',
      '--parent',
      'acme/platform',
      '--identity',
      me,
      '--role',
      'viewer',
      // Scheduled: whoami says it has not started, so it never reads as held now.
      '--from',
      '2h',
      '--for',
      '8h',
    ],
    { ...env, ...admin },
  );
  ok(t, mine);
  const whoBelow = await arbor(['whoami'], env);
  t.regex(
    whoBelow.stdout,
    new RegExp(`viewer at acme/platform  ${PLATFORM}  \\(starts in 2h, for 8h\\)$`, 'm'),
  );
  t.regex(who.stdout, new RegExp(`owner at acme  ${ORG}$`, 'm'), 'no window: nothing more');
  const whoBelowJson = JSON.parse((await arbor(['whoami', '-o', 'json'], env)).stdout) as {
    bindings: Array<{ group: string; groupUid: string }>;
  };
  t.true(whoBelowJson.bindings.some((x) => x.group === 'acme/platform' && x.groupUid === PLATFORM));
  const mineUid = /[0-9a-f]{40}(?:\/[0-9a-f]{16})+/.exec(mine.stdout)?.[0];
  ok(t, await arbor(['role-bindings', 'delete', mineUid!], env));

  // Update changes only the fields given; delete refuses a group with children.
  const updated = await arbor(
    ['groups', 'update', PLATFORM, '--description', 'the platform team', '-o', 'json'],
    env,
  );
  ok(t, updated);
  t.is((JSON.parse(updated.stdout) as { name: string }).name, 'platform');
  const refused = await arbor(['groups', 'delete', ORG], env);
  t.is(refused.code, 3);
  t.regex(refused.stderr, /^arbor: Precondition failed: /);

  // Logout: the next call asks for a login, with its exit code.
  ok(t, await arbor(['auth', 'logout'], env));
  const after = await arbor(['groups', 'list'], env);
  t.is(after.code, 6);
  t.regex(after.stderr, /^arbor: not signed in to .*\n\s+run: arbor auth login/);
});

/** A body file for `-f`, in this test's home. */
function writeBody(body: object): string {
  const file = join(home, `body-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(body));
  return file;
}

test.serial(
  'cli: errors are the server’s words and a stable exit code, never a stack',
  async (t) => {
    const env = { ...admin, ARBOR_API_URL: s.url };
    const invalid = await arbor(['groups', 'create', '--name', 'Not Valid!'], env);
    t.is(invalid.code, 3);
    t.regex(invalid.stderr, /^arbor: Invalid argument: name: /);
    const missing = await arbor(['groups', 'get', `${'f'.repeat(40)}`], env);
    t.is(missing.code, 4);
    t.regex(missing.stderr, /^arbor: Not found: /);
    const denied = await arbor(['groups', 'list'], {
      ARBOR_TOKEN: 'not-a-token',
      ARBOR_API_URL: s.url,
    });
    t.is(denied.code, 6);
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const down = await arbor(['groups', 'list', '--api', nobody], admin);
    t.is(down.code, 7);
    t.true(down.stderr.startsWith(`arbor: cannot reach the Arbor API at ${nobody}: ECONNREFUSED`));
    const usage = await arbor(['groups', 'list', '-o', 'xml'], env);
    t.is(usage.code, 2);
    for (const r of [invalid, missing, denied, down, usage]) t.notRegex(r.stderr, /^\s+at /m);
  },
);

test.serial(
  'cli: --id-token-file is read again for each new token (a rotating projected token)',
  async (t) => {
    const cluster = await TestIssuer.start('ES256');
    try {
      const env = { ...admin, ARBOR_API_URL: s.url };
      const org = (
        await arbor(['groups', 'create', '--name', 'workloads', '-o', 'name'], env)
      ).stdout.trim();
      const id = await arbor(
        [
          'identities',
          'create',
          '--parent',
          org,
          '--name',
          'deployer',
          '-o',
          'name',
          '-f',
          writeBody({
            staticKeys: {
              issuer: cluster.url,
              subject: 'system:serviceaccount:ci:deployer',
              issuerKeys: JSON.stringify(cluster.jwks()),
            },
          }),
        ],
        env,
      );
      ok(t, id);
      const file = join(home, 'projected-token');
      // The audience the STS wants, as the server publishes it (its ARBOR_ISSUER_URL).
      const { audience: aud } = (await s.admin.get('/.well-known/arbor-login')).body as {
        audience: string;
      };
      const mint = () => cluster.mint({ sub: 'system:serviceaccount:ci:deployer', aud });
      writeFileSync(file, await mint());
      const person = { ARBOR_API_URL: s.url };
      ok(
        t,
        await arbor(
          ['auth', 'login', '--identity', id.stdout.trim(), '--id-token-file', file],
          person,
        ),
      );
      const first = (await arbor(['auth', 'token'], person)).stdout.trim();
      t.is(decodeJwt(first).sub, id.stdout.trim());

      // An hour on: the API token has expired, and the kubelet has written a new token.
      const creds = join(home, 'arbor', 'credentials.json');
      const expire = () => {
        const c = JSON.parse(readFileSync(creds, 'utf8')) as {
          entries: Record<string, { expiry: string }>;
        };
        c.entries[s.url]!.expiry = new Date(Date.now() - 1000).toISOString();
        writeFileSync(creds, JSON.stringify(c), { mode: 0o600 });
      };
      expire();
      writeFileSync(file, await mint());
      const second = await arbor(['auth', 'token'], person);
      ok(t, second);
      t.not(second.stdout.trim(), first);
      t.is(decodeJwt(second.stdout.trim()).sub, id.stdout.trim());

      // The file is what counts: a token in it that the STS refuses fails the refresh.
      expire();
      writeFileSync(file, await cluster.mint({ sub: 'someone-else', aud }));
      const refused = await arbor(['auth', 'token'], person);
      t.is(refused.code, 1);
      t.regex(refused.stderr, /refused the sign-in \(403\)/);
    } finally {
      await cluster.stop();
    }
  },
);

test.serial('cli: completion offers group and role names from the server', async (t) => {
  const env = { ...admin, ARBOR_API_URL: s.url };
  await arbor(['groups', 'create', '--name', 'completed', '-o', 'name'], env);
  const script = (await arbor(['completion', 'bash'])).stdout;
  // `arbor` on PATH, as after set-up.
  const bin = mkdtempSync(join(home, 'bin-'));
  writeFileSync(
    join(bin, 'arbor'),
    `#!/bin/sh\nexec "${process.execPath}" --import=tsx "${join(process.cwd(), 'src/main.ts')}" "$@"\n`,
    { mode: 0o755 },
  );
  const complete = (words: string) =>
    new Promise<string>((resolve) => {
      const cword = words.split(' ').length - 1;
      const child = spawn(
        'bash',
        [
          '-c',
          `${script}\nCOMP_WORDS=(${words}); COMP_CWORD=${cword}; _arbor_complete; echo "\${COMPREPLY[*]}"`,
        ],
        { env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH ?? ''}` } },
      );
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.on('close', () => resolve(out.trim()));
    });
  // Names, not uids: what a person types (a group path, a role name).
  t.true((await complete('arbor groups get comp')).split(' ').includes('completed'));
  t.true((await complete(`arbor groups list --parent ''`)).split(' ').includes('completed'));
  t.true((await complete(`arbor invites create --role ''`)).split(' ').includes('viewer'));
  // Capabilities, from the program itself: the argument of can-i and who-can.
  const caps = (await complete('arbor can-i groups.l')).split(' ');
  t.deepEqual(caps, ['groups.list']);
  t.true((await complete(`arbor who-can ''`)).split(' ').includes('role_bindings.create'));
  // -o offers the command's own output formats.
  t.deepEqual((await complete(`arbor groups list -o ''`)).split(' '), [
    'table',
    'wide',
    'json',
    'yaml',
    'name',
  ]);
  t.deepEqual((await complete('arbor groups get -o ya')).split(' '), ['yaml']);
  t.false((await complete('arbor __')).includes('__complete'), 'the helper is not offered');
});
