import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor plan` / `arbor apply` with a conditional RoleBinding manifest, as a real process:
 * the plan's access delta says the gain is conditional ("when office hours"), never an
 * unconditional one, and apply creates the binding with its condition.
 */
let server: TestServer;
let home: string;
let dir: string;
let platform: string;
let ci: string;

const arbor = (args: string[]): Promise<CliRun> =>
  runArbor(args, { HOME: home, ARBOR_API_URL: server.url, ARBOR_ADMIN_TOKEN: ADMIN_TOKEN });

test.before(async () => {
  server = await startServer();
  home = mkdtempSync(join(tmpdir(), 'arbor-plan-cond-'));
  dir = join(home, 'manifests');
  mkdirSync(dir);
  const org = await createGroup(server.admin, 'acme');
  platform = await createGroup(server.admin, 'platform', org);
  ci = await createIdentity(server.admin, platform, 'ci');
});

test.after.always(async () => {
  await server?.close();
  rmSync(home, { recursive: true, force: true });
});

test.serial(
  'plan shows a conditional gain as conditional; apply makes it conditional',
  async (t) => {
    writeFileSync(
      join(dir, 'binding.yaml'),
      `apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: ci-viewer, namespace: team-a }
spec:
  groupUid: ${platform}
  identityUid: ${ci}
  role: viewer
  condition:
    expression: 'request.time.getHours() < 18'
    title: office hours
`,
    );
    const plan = await arbor(['plan', '-f', dir]);
    t.is(plan.code, 2, plan.stderr);
    t.regex(plan.stdout, /\+ ci gains \d+ capabilities in acme\/platform when office hours: /);
    t.notRegex(plan.stdout, /gains \d+ capabilities in acme\/platform:/);
    const json = JSON.parse((await arbor(['plan', '-f', dir, '-o', 'json'])).stdout);
    t.is(json.access.changes.length, 1);
    t.like(json.access.changes[0], { effect: 'gain', identity: 'ci', when: 'office hours' });

    const applied = await arbor(['apply', '-f', dir]);
    t.is(applied.code, 0, applied.stderr);
    const page = await server.admin.get(`/iam/v2beta1/roleBindings?uidp.children_of=${platform}`);
    t.deepEqual(
      page.body.roleBindings.map((b: { condition?: unknown }) => b.condition),
      [{ expression: 'request.time.getHours() < 18', title: 'office hours' }],
    );
  },
);
