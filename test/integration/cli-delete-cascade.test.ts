import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { runArbor } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * A delete names its revocations: `arbor identities delete` says which role bindings went with the
 * identity (the API's DELETE answers an empty body, so the CLI lists them first).
 */
let s: TestServer;

test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

const arbor = (args: string[]) =>
  runArbor([...args, '--api', s.url], { ARBOR_TOKEN: ADMIN_TOKEN, HOME: '/nonexistent' });

test('cli: deleting an identity names the role bindings that went with it', async (t) => {
  const org = await createGroup(s.admin, 'cli-cascade');
  const folder = await createGroup(s.admin, 'folder', org);
  const ci = await createIdentity(s.admin, org, 'ci');
  const bindings = [
    await createBinding(s.admin, org, ci, builtinRoleUid('viewer')),
    await createBinding(s.admin, folder, ci, builtinRoleUid('editor')),
  ].sort();
  const lone = await createIdentity(s.admin, org, 'lone');

  const res = await arbor(['identities', 'delete', ci, lone]);
  t.is(res.code, 0, res.stderr);
  // By their paths, and the bindings by role and group, in uid order.
  t.is(
    res.stdout,
    `deleted identity cli-cascade/ci and its 2 role bindings: ${bindings
      .map((b) => (b.startsWith(folder) ? 'editor at cli-cascade/folder' : 'viewer at cli-cascade'))
      .join(', ')}\n` + 'deleted identity cli-cascade/lone\n',
  );
  t.is((await s.admin.get(`/iam/v2beta1/roleBindings?identity=${ci}`)).body.totalCount, '0');
});

test('cli: deleting a role binding that is already gone exits with the not-found code', async (t) => {
  const org = await createGroup(s.admin, 'cli-gone');
  const ci = await createIdentity(s.admin, org, 'ci');
  const binding = await createBinding(s.admin, org, ci, builtinRoleUid('viewer'));
  t.is((await arbor(['role-bindings', 'delete', binding])).code, 0);
  const again = await arbor(['role-bindings', 'delete', binding]);
  t.is(again.code, 4, again.stderr);
  t.is(again.stderr, `arbor: Not found: iam.arbor.dev/RoleBinding ${binding}\n`);
});

test('cli: a group, a role and a role binding are deleted by name and said so by name', async (t) => {
  const org = await createGroup(s.admin, 'cli-named');
  const sandbox = await createGroup(s.admin, 'sandbox', org);
  const ci = await createIdentity(s.admin, org, 'ci');
  await createBinding(s.admin, sandbox, ci, builtinRoleUid('viewer'));
  const del = await arbor([
    'role-bindings',
    'delete',
    '--group',
    'cli-named/sandbox',
    '--identity',
    'cli-named/ci',
    '--role',
    'viewer',
  ]);
  t.is(del.code, 0, del.stderr);
  t.is(del.stdout, 'deleted role binding cli-named/ci as viewer at cli-named/sandbox\n');
  const group = await arbor(['groups', 'delete', 'cli-named/sandbox']);
  t.is(group.code, 0, group.stderr);
  t.is(group.stdout, 'deleted group cli-named/sandbox\n');
});
