import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { runArbor } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * The CLI answers in names: `arbor role-bindings get|delete` take a binding by its group,
 * identity and role, and the audit table's RESOURCE column names every kind, as far as the
 * caller may see it.
 */
let s: TestServer;
let org: string;
let platform: string;
let ci: string;
let binding: string;
let ownerToken: string;

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'cli-names');
  platform = await createGroup(s.admin, 'platform', org);
  ci = await createIdentity(s.admin, platform, 'ci');
  binding = await createBinding(s.admin, platform, ci, builtinRoleUid('viewer'));
  // Sees the folder and reads its trail; sees nothing above it.
  const owner = await createIdentity(s.admin, org, 'owner');
  const folderOwner = await createRole(s.admin, org, 'folder-owner', [
    'groups.list',
    'identity.list',
    'roles.list',
    'role_bindings.list',
    'audit.list',
  ]);
  await createBinding(s.admin, platform, owner, folderOwner);
  ownerToken = (await s.arbor.tokens.sign(owner, { iss: ISSUER, sub: 'sub-owner' })).token;
});
test.after.always(async () => {
  await s?.close();
});

const arbor = (args: string[], token = ADMIN_TOKEN) =>
  runArbor([...args, '--api', s.url], { ARBOR_TOKEN: token, HOME: '/nonexistent' });

const byNames = ['--group', 'cli-names/platform', '--identity', 'cli-names/platform/ci'];

test('role-bindings get: by group, identity and role names, as by its uid', async (t) => {
  const r = await arbor(['role-bindings', 'get', ...byNames, '--role', 'viewer', '-o', 'json']);
  t.is(r.code, 0, r.stderr);
  t.is(JSON.parse(r.stdout).uid, binding);
  const byUid = await arbor(['role-bindings', 'get', binding, '-o', 'json']);
  t.is(JSON.parse(byUid.stdout).uid, binding);
  // No such binding: not found, said in the names given.
  const none = await arbor(['role-bindings', 'get', ...byNames, '--role', 'editor']);
  t.is(none.code, 4, none.stderr);
  t.regex(
    none.stderr,
    /no role binding of cli-names\/platform\/ci as editor at cli-names\/platform/,
  );
  // Half the flags, or a uid and flags: usage errors.
  const half = await arbor(['role-bindings', 'get', '--group', 'cli-names/platform']);
  t.is(half.code, 2);
  t.regex(half.stderr, /give --identity and --role too/);
  const both = await arbor(['role-bindings', 'get', binding, ...byNames, '--role', 'viewer']);
  t.is(both.code, 2);
  const help = await arbor(['role-bindings', 'get', '--help']);
  t.regex(help.stdout, /--identity <identity>/);
});

test('audit: RESOURCE names every kind, bindings by what they grant', async (t) => {
  const r = await arbor(['audit', '--subtree', 'cli-names/platform']);
  t.is(r.code, 0, r.stderr);
  const row = (kind: string, text: string) =>
    r.stdout.split('\n').some((l) => l.includes(` ${kind} `) && l.includes(` ${text} `));
  t.true(row('Identity', 'cli-names/platform/ci'), r.stdout);
  t.true(row('RoleBinding', 'cli-names/platform/ci as viewer at cli-names/platform'), r.stdout);
  t.true(row('RoleBinding', 'cli-names/owner as cli-names/folder-owner at cli-names/platform'));
  // The folder owner reads the same rows; the organization it cannot see is not named
  // (the API's path starts at the folder; the CLI's own lookups show a short uid).
  const owner = await arbor(['audit', '--subtree', platform], ownerToken);
  t.is(owner.code, 0, owner.stderr);
  t.regex(owner.stdout, /\sIdentity\s+platform\/ci\s/);
  t.regex(owner.stdout, /\s[0-9a-f]{8}\/platform\/ci as viewer at [0-9a-f]{8}\/platform\s/);
  t.false(owner.stdout.includes('cli-names/'));
});

test('role-bindings delete: by names, and the message names it', async (t) => {
  // A binding of its own: the tests of this file run at once, and the others read `binding`.
  const deploy = await createIdentity(s.admin, platform, 'deploy');
  const doomed = await createBinding(s.admin, platform, deploy, builtinRoleUid('viewer'));
  const r = await arbor([
    'role-bindings',
    'delete',
    '--group',
    'cli-names/platform',
    '--identity',
    'cli-names/platform/deploy',
    '--role',
    'viewer',
  ]);
  t.is(r.code, 0, r.stderr);
  t.is(
    r.stdout,
    'deleted role binding cli-names/platform/deploy as viewer at cli-names/platform\n',
  );
  const again = await arbor(['role-bindings', 'get', doomed]);
  t.is(again.code, 4);
});
