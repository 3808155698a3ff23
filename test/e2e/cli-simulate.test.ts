import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor simulate` as a real process against a live server: a change given by names is
 * answered one line per identity and group, `--explain` adds the proofs, `-o json` the
 * whole answer, and nothing changes.
 */
let server: TestServer;
let home: string;
let org: string;
let ci: string;

function arbor(args: string[]): Promise<CliRun> {
  return runArbor(['simulate', ...args], {
    HOME: home,
    ARBOR_API_URL: server.url,
    ARBOR_ADMIN_TOKEN: ADMIN_TOKEN,
  });
}

test.before(async () => {
  server = await startServer();
  home = mkdtempSync(join(tmpdir(), 'arbor-simulate-'));
  org = await createGroup(server.admin, 'acme');
  const platform = await createGroup(server.admin, 'platform', org);
  ci = await createIdentity(server.admin, platform, 'ci');
  await createRole(server.admin, org, 'lister', ['groups.list', 'repo.list']);
  await createBinding(server.admin, platform, ci, builtinRoleUid('owner'));
});
test.after.always(async () => {
  await server?.close();
  rmSync(home, { recursive: true, force: true });
});

test('--unbind by names: one line per identity and group; --explain the proof; -o json', async (t) => {
  const args = ['--unbind', 'acme/platform/ci', '--role', 'owner', '--group', 'acme/platform'];
  const r = await arbor(args);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^ci loses \d{2} capabilities in acme\/platform\n$/);
  const explained = await arbor([...args, '--explain']);
  t.regex(explained.stdout, /identity: acme\/platform\/ci; group: acme\/platform/);
  t.regex(explained.stdout, /before: owner at [0-9a-f]{40}\/[0-9a-f]{16} \(binding /);
  const json = JSON.parse((await arbor([...args, '-o', 'json'])).stdout);
  t.is(json.totalCount, '1');
  t.is(json.deltas[0].identity.path, 'acme/platform/ci');
  // Nothing changed: the binding is still there.
  const still = await server.admin.get(`/iam/v2beta1/roleBindings?identity=${ci}`);
  t.is(still.body.roleBindings.length, 1);
});

test('--bind, --role-capabilities, --delete-identity; a wrong call says how', async (t) => {
  const bind = await arbor(['--bind', 'acme/platform/ci', '--role', 'lister', '--group', 'acme']);
  t.is(bind.code, 0, bind.stderr);
  t.regex(bind.stdout, /^ci gains 2 capabilities in acme\n/);
  const edit = await arbor(['--role-capabilities', 'lister=tag.list', '--group', 'acme']);
  t.is(edit.code, 0, edit.stderr);
  t.regex(edit.stdout, /No access changes/);
  const gone = await arbor(['--delete-identity', 'acme/platform/ci']);
  t.regex(gone.stdout, /^ci loses \d+ capabilities in acme\/platform\n/);
  const none = await arbor(['--group', 'acme']);
  t.is(none.code, 2);
  t.regex(none.stderr, /give exactly one change/);
  const missing = await arbor([
    '--unbind',
    'acme/platform/ci',
    '--role',
    'lister',
    '--group',
    'acme',
  ]);
  t.is(missing.code, 4);
  t.regex(missing.stderr, /holds no lister binding at acme/);
});
