import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { builtinRole } from '../helpers/authority.js';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/** `arbor access unused` as a process against a real Arbor. */
let s: TestServer;
let home: string;
let org: string;
let idle: string;
let idleBinding: string;
let soonBinding: string;
const DAY = 86_400_000;

test.before(async () => {
  s = await startServer();
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-unused-'));
  org = await createGroup(s.admin, 'cli-unused');
  const folder = await createGroup(s.admin, 'team', org);
  const viewer = await builtinRole(s.admin, 'viewer');
  idle = await createIdentity(s.admin, folder, 'idle');
  idleBinding = await createBinding(s.admin, folder, idle, viewer);
  const soon = await createIdentity(s.admin, folder, 'soon');
  const r = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: soon,
    roleUid: viewer,
    expireTime: new Date(Date.now() + 2 * DAY).toISOString(),
  });
  soonBinding = r.body.uid;
  const old = new Date(Date.now() - 200 * DAY);
  await s.db
    .knex('role_bindings')
    .whereIn('uid', [idleBinding, soonBinding])
    .update({ created_at: old });
  await s.db
    .knex('identities')
    .whereIn('uid', [idle, soon])
    .update({ created_at: old, last_seen_at: old });
});
test.after.always(async () => {
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

const arbor = (args: string[]): Promise<CliRun> =>
  runArbor([...args, '--api', s.url], { HOME: home, ARBOR_TOKEN: ADMIN_TOKEN });

test.serial('access unused lists the findings by name, never-used ones as never', async (t) => {
  const r = await arbor(['access', 'unused', '--group', 'cli-unused', '--window', '30d']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /KIND\s+NAME\s+LAST USED/);
  t.regex(r.stdout, /identity\s+cli-unused\/team\/idle\s+never/);
  t.regex(r.stdout, /roleBinding\s+cli-unused\/team\/idle at cli-unused\/team\s+never/);
  const json = await arbor(['access', 'unused', '--kind', 'roleBinding', '-o', 'json']);
  t.is(json.code, 0, json.stderr);
  const uids = (JSON.parse(json.stdout) as Array<{ uid: string }>).map((f) => f.uid).sort();
  t.deepEqual(uids, [idleBinding, soonBinding].sort());
  const bad = await arbor(['access', 'unused', '--window', '12h']);
  t.not(bad.code, 0);
  t.regex(bad.stderr, /--window takes whole days/);
});

test.serial('--expire-in sets each binding to expire then, keeping sooner expiries', async (t) => {
  const before = Date.now();
  const r = await arbor([
    'access',
    'unused',
    '--group',
    org,
    '--window',
    '30d',
    '--expire-in',
    '30d',
  ]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /1 binding\(s\) set to expire at .* \(1 expire sooner already\)/);
  const idleNow = await s.admin.get(`/iam/v2beta1/roleBindings/${idleBinding}`);
  const at = Date.parse(idleNow.body.expireTime);
  t.true(at >= before + 30 * DAY && at <= Date.now() + 30 * DAY);
  const soonNow = await s.admin.get(`/iam/v2beta1/roleBindings/${soonBinding}`);
  t.true(Date.parse(soonNow.body.expireTime) < before + 3 * DAY, 'the sooner expiry is kept');
});
