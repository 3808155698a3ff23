import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { ISSUER } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * The CLI by names alone, as a process against a real Arbor: no uid is typed anywhere.
 * Groups by path, identities by group path and name, roles by name (for the group a binding
 * is made at), repos by group path and name; an unknown name is "no group named X" with the
 * visible names nearest to it, an ambiguous one lists the candidates; a tenant names its
 * groups from where its view starts and is never told of a hidden one.
 */
let s: TestServer;
let home: string;

test.before(async () => {
  s = await startServer();
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-names-'));
});
test.after.always(async () => {
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

const admin = () => ({ ARBOR_TOKEN: ADMIN_TOKEN, ARBOR_API_URL: s.url });
function arbor(args: string[], env: Record<string, string> = admin()): Promise<CliRun> {
  return runArbor(args, { HOME: home, XDG_CONFIG_HOME: home, ...env });
}
const ok = (t: ExecutionContext, r: CliRun) => t.is(r.code, 0, `exit ${r.code}: ${r.stderr}`);
const json = (r: CliRun) => JSON.parse(r.stdout) as Record<string, any>;

test.serial('cli: a tree, an identity and bindings made and read by names only', async (t) => {
  ok(t, await arbor(['groups', 'create', '--name', 'acme']));
  ok(t, await arbor(['groups', 'create', '--parent', 'acme', '--name', 'platform']));
  ok(t, await arbor(['groups', 'create', '--parent', 'acme/platform', '--name', 'sre']));
  const sre = await arbor(['groups', 'get', 'acme/platform/sre', '-o', 'json']);
  ok(t, sre);
  t.is(json(sre).name, 'sre');
  const body = join(home, 'ci.json');
  writeFileSync(body, JSON.stringify({ claimMatch: { issuer: ISSUER, subject: 'sub-ci' } }));
  ok(
    t,
    await arbor(['identities', 'create', '--parent', 'acme/platform', '--name', 'ci', '-f', body]),
  );
  const bound = await arbor([
    'role-bindings',
    'create',
    '--parent',
    'acme/platform',
    '--identity',
    'acme/platform/ci',
    '--role',
    'editor',
    '-o',
    'json',
  ]);
  ok(t, bound);
  t.is(json(bound).role.name, 'editor');
  t.is(json(bound).identity.name, 'ci');
  const ci = json(bound).identity.uid as string;

  const yes = await arbor([
    'can-i',
    'repo.create',
    '--group',
    'acme/platform/sre',
    '--as',
    'acme/platform/ci',
  ]);
  t.is(yes.stdout, 'yes\n', yes.stderr);
  const who = await arbor(['who-can', 'repo.create', '--group', 'acme/platform', '-o', 'json']);
  ok(t, who);
  t.true(JSON.parse(who.stdout).some((h: any) => h.identityUid === ci));
  const list = await arbor([
    'role-bindings',
    'list',
    '--identity',
    'acme/platform/ci',
    '-o',
    'json',
  ]);
  ok(t, list);
  t.is(JSON.parse(list.stdout).length, 1);
  const tree = await arbor(['tree', 'acme/platform']);
  ok(t, tree);
  t.regex(tree.stdout, /^platform .*\n└── sre\n$/);

  // A custom role at acme is bindable below it by name; a role named at two levels is not.
  ok(
    t,
    await arbor([
      'roles',
      'create',
      '--parent',
      'acme',
      '--name',
      'deployer',
      '--capability',
      'groups.list',
    ]),
  );
  ok(
    t,
    await arbor([
      'role-bindings',
      'create',
      '--parent',
      'acme/platform/sre',
      '--identity',
      'acme/platform/ci',
      '--role',
      'deployer',
    ]),
  );
  ok(
    t,
    await arbor([
      'roles',
      'create',
      '--parent',
      'acme/platform',
      '--name',
      'deployer',
      '--capability',
      'groups.list',
    ]),
  );
  const twice = await arbor([
    'role-bindings',
    'create',
    '--parent',
    'acme/platform/sre',
    '--identity',
    'acme/platform/ci',
    '--role',
    'deployer',
  ]);
  t.is(twice.code, 3, twice.stderr);
  t.regex(twice.stderr, /^arbor: deployer names 2 roles you can see: give one of their uids\n/);
  t.is(
    twice.stderr.match(
      / {2}[0-9a-f]{40}\/[0-9a-f]{16}(\/[0-9a-f]{16})? {2}role deployer defined at /g,
    )?.length,
    2,
  );

  // Repos: a group path and the repo's name.
  ok(t, await arbor(['repos', 'create', '--parent', 'acme', '--name', 'app']));
  const app = await arbor(['repos', 'get', 'acme/app', '-o', 'json']);
  ok(t, app);
  t.is(json(app).name, 'app');

  ok(t, await arbor(['groups', 'create', '--parent', 'acme/platform', '--name', 'old']));
  ok(t, await arbor(['groups', 'delete', 'acme/platform/old']));
  t.is((await arbor(['groups', 'get', 'acme/platform/old'])).code, 4);
});

test.serial('cli: an unknown name says so, with the visible names nearest to it', async (t) => {
  const typo = await arbor(['groups', 'get', 'acme/platfrom']);
  t.is(typo.code, 4);
  t.is(typo.stderr, 'arbor: no group named acme/platfrom\n  did you mean acme/platform?\n');
  const top = await arbor(['groups', 'get', 'acem/platform']);
  t.is(top.stderr, 'arbor: no group named acem/platform\n  did you mean acme/platform?\n');
  const identity = await arbor(['identities', 'get', 'acme/platform/cj']);
  t.is(
    identity.stderr,
    'arbor: no identity named acme/platform/cj\n  did you mean acme/platform/ci?\n',
  );
  const role = await arbor(['roles', 'get', 'editr']);
  t.is(role.code, 4);
  t.regex(role.stderr, /did you mean editor\?/);
  const far = await arbor(['groups', 'get', 'zzzzzz']);
  t.is(far.stderr, 'arbor: no group named zzzzzz\n');
});

test.serial(
  'cli: a tenant names from where its view starts and learns nothing hidden',
  async (t) => {
    const ci = JSON.parse(
      (await arbor(['identities', 'get', 'acme/platform/ci', '-o', 'json'])).stdout,
    ).uid as string;
    const token = (await s.arbor.tokens.sign(ci, { iss: ISSUER, sub: 'sub-ci' })).token;
    const tenant = { ARBOR_TOKEN: token, ARBOR_API_URL: s.url };
    const platform = await arbor(['groups', 'get', 'platform', '-o', 'json'], tenant);
    ok(t, platform);
    t.is(json(platform).name, 'platform');
    const hidden = await arbor(['groups', 'get', 'acme/platform'], tenant);
    t.is(hidden.code, 4);
    t.is(hidden.stderr, 'arbor: no group named acme/platform\n');
    const near = await arbor(['groups', 'get', 'acme'], tenant);
    t.is(near.stderr, 'arbor: no group named acme\n', 'the hidden organization is never suggested');
  },
);

test.serial(
  'cli: completion offers paths and names with descriptions, and bash completes them',
  async (t) => {
    const groups = await arbor(['__complete', 'groups']);
    ok(t, groups);
    t.deepEqual(
      groups.stdout
        .split('\n')
        .filter((l) => l.startsWith('acme'))
        .sort(),
      ['acme\tgroup', 'acme/platform\tgroup', 'acme/platform/sre\tgroup'],
    );
    const identities = await arbor(['__complete', 'identities']);
    t.is(identities.stdout, 'acme/platform/ci\tidentity\n');
    const roles = (await arbor(['__complete', 'roles'])).stdout.split('\n');
    t.true(roles.includes('editor\tEditor Role (built-in)'));
    t.is(roles.filter((l) => l.startsWith('deployer\t')).length, 2);
    t.true(roles.includes('deployer\trole, defined at acme/platform'));

    // The bash script, with `arbor` this checkout, completing a path after `groups get`.
    const script = (await arbor(['completion', 'bash'])).stdout;
    const bash = await new Promise<string>((resolve, reject) =>
      execFile(
        'bash',
        [
          '-c',
          `arbor() { "${process.execPath}" --import=tsx src/main.ts "$@"; }\n${script}\n` +
            'COMP_WORDS=(arbor groups get acme/platform/); COMP_CWORD=3; _arbor_complete; ' +
            'printf "%s\\n" "${COMPREPLY[@]}"',
        ],
        { env: { PATH: process.env.PATH ?? '', HOME: home, ...admin() } },
        (err, stdout) => (err ? reject(new Error(err.message)) : resolve(stdout)),
      ),
    );
    t.is(bash, 'acme/platform/sre\n');
  },
);
