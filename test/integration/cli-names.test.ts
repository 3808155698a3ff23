import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { decodeJwt } from 'jose';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { ISSUER } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
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
  // Loopback OIDC issuers (TestIssuer) are http.
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
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
/** `role-bindings create` of the ci identity, every reference by name. */
const bindCi = (group: string, role: string, ...more: string[]) =>
  arbor([
    'role-bindings',
    'create',
    '--parent',
    group,
    '--identity',
    'acme/platform/ci',
    '--role',
    role,
    ...more,
  ]);

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
  const bound = await bindCi('acme/platform', 'editor', '-o', 'json');
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
  ok(t, await bindCi('acme/platform/sre', 'deployer'));
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
  const twice = await bindCi('acme/platform/sre', 'deployer');
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

test.serial(
  'cli: export --group takes a path; invites show their role and group by name',
  async (t) => {
    const platform = json(await arbor(['groups', 'get', 'acme/platform', '-o', 'json'])).uid;
    const exported = await arbor(['export', '--group', 'acme/platform']);
    ok(t, exported);
    t.regex(exported.stdout, new RegExp(`adoptUid: ${platform}\\n`));
    const typo = await arbor(['export', '--group', 'acme/platfrom']);
    t.is(typo.code, 1);
    t.is(
      typo.stderr,
      'arbor: export: no group named acme/platfrom\n  did you mean acme/platform?\n',
    );

    const invite = await arbor([
      'invites',
      'create',
      '--parent',
      'acme/platform',
      '--role',
      'editor',
      '--ttl',
      '3600s',
      '-o',
      'json',
    ]);
    ok(t, invite);
    const invites = await arbor(['invites', 'list', '--parent', 'acme/platform']);
    ok(t, invites);
    t.regex(invites.stdout, /^ROLE\s+GROUP\s+EXPIRES\s+UID$/m);
    t.regex(
      invites.stdout,
      new RegExp(`^editor\\s+acme/platform\\s+\\d{4}-\\S+ \\S+\\s+${json(invite).uid}$`, 'm'),
    );
  },
);

test.serial('cli: auth login --identity takes a path of names', async (t) => {
  const issuer = await TestIssuer.start();
  t.teardown(() => issuer.stop());
  ok(
    t,
    await arbor([
      'identities',
      'create',
      '--parent',
      'acme/platform',
      '--name',
      'deploy',
      '--issuer',
      issuer.url,
      '--subject',
      'sub-deploy',
    ]),
  );
  const deploy = json(await arbor(['identities', 'get', 'acme/platform/deploy', '-o', 'json'])).uid;
  const { audience: aud } = (await s.admin.get('/.well-known/arbor-login')).body as {
    audience: string;
  };
  const file = join(home, 'deploy-token');
  writeFileSync(file, await issuer.mint({ sub: 'sub-deploy', aud }));
  const args = ['auth', 'login', '--identity', 'acme/platform/deploy', '--id-token-file', file];

  // With no token here to look the name up with (and no person to sign in as), it says so.
  const empty = mkdtempSync(join(tmpdir(), 'arbor-cli-names-empty-'));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const alone = await arbor(args, { ARBOR_API_URL: s.url, HOME: empty, XDG_CONFIG_HOME: empty });
  t.is(alone.code, 1);
  t.regex(
    alone.stderr,
    /^arbor auth login: --identity acme\/platform\/deploy is a name, and there is no token here to look it up with .*give the identity's uid/,
  );

  // Resolved with the token this address has (here ARBOR_TOKEN); the uid is what is kept.
  const login = await arbor(args);
  ok(t, login);
  t.regex(login.stderr, /^Signed in to http\S+ as identity /);
  const token = await arbor(['auth', 'token'], { ARBOR_API_URL: s.url });
  ok(t, token);
  t.is(decodeJwt(token.stdout.trim()).sub, deploy);
  const kept = JSON.parse(readFileSync(join(home, 'arbor', 'credentials.json'), 'utf8')) as {
    entries: Record<string, { requestedIdentity?: string }>;
  };
  t.is(kept.entries[s.url]?.requestedIdentity, deploy);

  const typo = await arbor([
    'auth',
    'login',
    '--identity',
    'acme/platform/deplo',
    '--id-token-file',
    file,
  ]);
  t.is(typo.code, 1);
  t.is(
    typo.stderr,
    'arbor auth login: no identity named acme/platform/deplo\n  did you mean acme/platform/deploy?\n',
  );
});
