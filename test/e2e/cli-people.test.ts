import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';

/**
 * The CLI for people, as a real process against a real server, its output piped
 * (as a script or `| less` reads it): tables whole, names beside uids, the verbs a daily
 * session needs.
 */

const ADMIN = 'cli-people-admin-token-0123456789';
let server: ArborProcess;
let home: string;

/** `arbor <args>` against the test's server, as the admin, piped (test/helpers/cli-run.ts). */
function arbor(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runArbor(args, {
    HOME: home,
    ARBOR_API_URL: server.url,
    ARBOR_ADMIN_TOKEN: ADMIN,
    // Piped output ignores COLUMNS: only a terminal is fitted.
    COLUMNS: '40',
    ...env,
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await arbor(args);
  if (r.code !== 0) throw new Error(`arbor ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

test.before(async () => {
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-people-'));
  server = await startArborProcess({
    DATA_DIR: join(home, 'data'),
    DATABASE_URL: '',
    ARBOR_ADMIN_TOKEN: ADMIN,
  });
});

test.after.always(() => {
  server?.kill();
  rmSync(home, { recursive: true, force: true });
});

// Every argument below is a name or a path of names: no uid is typed. Uids read from the
// output are used only to check what the output says.
test.serial('cli: a daily session by names alone, and piped tables are whole', async (t) => {
  await ok(['groups', 'create', '--name', 'acme', '-o', 'name']);
  const platform = (
    await ok(['groups', 'create', '--parent', 'acme', '--name', 'platform', '-o', 'name'])
  ).trim();
  // An identity with a claim match, from flags alone.
  const ci = JSON.parse(
    await ok([
      'identities',
      'create',
      '--parent',
      'acme/platform',
      '--name',
      'ci',
      '--issuer',
      'https://token.actions.githubusercontent.com',
      '--subject',
      'repo:acme/app:ref:refs/heads/main',
      '--claim',
      'repository_owner=acme',
      '-o',
      'json',
    ]),
  ) as { uid: string; claimMatch: Record<string, unknown> };
  t.deepEqual(ci.claimMatch, {
    issuer: 'https://token.actions.githubusercontent.com',
    subject: 'repo:acme/app:ref:refs/heads/main',
    claims: { repository_owner: 'acme' },
  });

  // Roles piped: every name and uid whole (registry.pull and registry.push are two names).
  const roles = await ok(['roles', 'list']);
  t.regex(roles, /^registry\.pull\s/m);
  t.regex(roles, /^registry\.push\s/m);
  t.false(roles.includes('…'), roles);

  // A binding for two hours.
  const before = Date.now();
  const binding = JSON.parse(
    await ok([
      'role-bindings',
      'create',
      '--parent',
      'acme/platform',
      '--identity',
      'acme/platform/ci',
      '--role',
      'editor',
      '--for',
      '2h',
      '-o',
      'json',
    ]),
  ) as { uid: string; expireTime: string };
  const ttl = Date.parse(binding.expireTime) - before;
  t.true(ttl > 7_100_000 && ttl <= 7_200_000 + 60_000, binding.expireTime);

  const bindings = await ok(['role-bindings', 'list', '--parent', 'acme/platform']);
  t.regex(bindings, /^IDENTITY\s+ROLE\s+GROUP\s+WINDOW\s+UID$/m);
  t.regex(
    bindings,
    new RegExp(`^ci\\s+editor\\s+acme/platform\\s+expires in 2h\\s+${binding.uid}$`, 'm'),
  );
  const wide = await ok(['role-bindings', 'list', '--parent', 'acme/platform', '-o', 'wide']);
  t.true(wide.includes(ci.uid) && wide.includes(platform), 'wide: whole uids');

  // Who can, can-i --explain, what-can: names beside uids.
  const who = await ok(['who-can', 'groups.list', '--group', 'acme/platform']);
  t.regex(who, new RegExp(`^acme/platform/ci\\s+editor\\s+acme/platform\\s+${ci.uid}$`, 'm'));
  const explain = await arbor([
    'can-i',
    'groups.list',
    '--group',
    'acme/platform',
    '--as',
    'acme/platform/ci',
    '--explain',
  ]);
  t.is(explain.code, 0, explain.stderr);
  t.regex(explain.stdout, /^yes\ngranted by:\n {2}role editor bound at acme\/platform \(binding /);
  const what = await ok(['what-can', '--as', 'acme/platform/ci']);
  t.regex(
    what,
    new RegExp(`^acme/platform\\s+editor\\s+\\S*groups\\.list\\S*\\s+${platform}$`, 'm'),
  );

  // The admin token may do anything anywhere: yes.
  const admin = await arbor(['can-i', 'groups.delete', '--group', 'acme/platform']);
  t.is(admin.code, 0, admin.stderr);
  t.is(admin.stdout, 'yes\n');

  // The audit trail of the subtree, by name; and with filters.
  const audit = await ok(['audit', '--subtree', 'acme']);
  t.regex(audit, /^TIME\s+ACTOR\s+OPERATION\s+KIND\s+RESOURCE\s+RESOURCE UID$/m);
  // RESOURCE is the path of names, for every kind: a binding by what it grants.
  t.regex(
    audit,
    new RegExp(`\\sadmin\\s+create\\s+Identity\\s+acme/platform/ci\\s+${ci.uid}$`, 'm'),
  );
  t.regex(audit, new RegExp(`\\sadmin\\s+create\\s+Group\\s+acme/platform\\s+${platform}$`, 'm'));
  t.regex(audit, /\screate\s+RoleBinding\s+acme\/platform\/ci as editor at acme\/platform\s/);
  const deletes = await arbor(['audit', '--subtree', 'acme', '--operation', 'delete']);
  t.is(deletes.stdout, '');
  t.regex(deletes.stderr, /No audit event/);
  const recent = await ok([
    'audit',
    'acme/platform',
    '--actor',
    'admin',
    '--since',
    '1h',
    '-o',
    'json',
  ]);
  t.is((JSON.parse(recent) as unknown[]).length, 1);
  const future = await ok([
    'audit',
    'acme/platform',
    '--since',
    '2099-01-01T00:00:00Z',
    '-o',
    'json',
  ]);
  t.deepEqual(JSON.parse(future), []);

  // The identity's own trail, by its path; then deletes by name, saying what goes along.
  const own = await ok(['audit', 'acme/platform/ci', '-o', 'json']);
  t.true((JSON.parse(own) as { resourceUid: string }[]).some((e) => e.resourceUid === ci.uid));
  const gone = await ok(['identities', 'delete', 'acme/platform/ci']);
  t.is(gone, 'deleted identity acme/platform/ci and its role binding editor at acme/platform\n');
  t.false(gone.includes(binding.uid as string), gone);
  await ok(['groups', 'delete', 'acme/platform']);
  await ok(['groups', 'delete', 'acme']);
  const left = await arbor(['groups', 'get', 'acme']);
  t.not(left.code, 0);
  t.regex(left.stderr, /no group named acme/);
});

test('cli: a mistyped capability is a usage error that suggests the right one', async (t) => {
  const r = await arbor(['can-i', 'group.update', '--group', 'a'.repeat(40)]);
  t.is(r.code, 2);
  t.regex(r.stderr, /"group\.update" is not a capability\n\s+did you mean groups\.update\?/);
  const who = await arbor(['who-can', 'groups.updte', '--group', 'a'.repeat(40)]);
  t.is(who.code, 2);
  t.regex(who.stderr, /did you mean groups\.update\?/);
});

test('cli: capabilities are listed with what each allows; version prints both versions', async (t) => {
  const caps = await ok(['capabilities']);
  t.regex(caps, /^groups\.create\s+create groups$/m);
  t.regex(caps, /^role_bindings\.list\s+list and read role bindings$/m);
  t.is((await ok(['capabilities', '-o', 'name'])).split('\n').filter(Boolean).length, 46);
  t.regex(await ok(['version']), /^arbor \d+\.\d+\.\d+ \(Node\.js \d+\.\d+\.\d+\)\n$/);
});

test('cli: help speaks English; a bad name is refused in words', async (t) => {
  const help = await ok(['--help']);
  t.regex(help, /delete\s+identities/);
  t.notRegex(help, /identitys|advisorys/);
  t.regex(await ok(['identities', 'create', '--help']), /create an identity/);
  t.regex(await ok(['subscriptions', 'create', '--help']), /create an event subscription/);
  const bad = await arbor(['groups', 'create', '--name', 'Acme!']);
  t.is(bad.code, 3);
  t.regex(
    bad.stderr,
    /name must be lowercase letters a-z, digits, spaces, dots, dashes or underscores/,
  );
  t.notRegex(bad.stderr, /\^\[/);
});
