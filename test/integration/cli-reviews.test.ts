import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor reviews open|list|show|decide|schedule` as processes against a real Arbor (PGlite
 * or PostgreSQL, by ARBOR_TEST_DB), as a team's owner.
 */
let s: TestServer;
let home: string;
let team: string;
let owner: string;
let botBinding: string;

test.before(async () => {
  s = await startServer({ LOG_LEVEL: 'silent' });
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-reviews-'));
  const org = await createGroup(s.admin, 'cli-reviews');
  team = await createGroup(s.admin, 'team', org);
  const o = await createIdentity(s.admin, org, 'owner');
  const bot = await createIdentity(s.admin, org, 'deploy-bot');
  await createBinding(s.admin, team, o, builtinRoleUid('owner'));
  botBinding = await createBinding(s.admin, team, bot, builtinRoleUid('editor'));
  owner = (await s.arbor.tokens.sign(o, { iss: 'https://x.example', sub: 'owner' })).token;
});
test.after.always(async () => {
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

function arbor(args: string[]): Promise<CliRun> {
  return runArbor([...args, '--api', s.url], { HOME: home, ARBOR_TOKEN: owner });
}

test.serial('open, show the items, decide, list, schedule', async (t) => {
  const opened = await arbor([
    'reviews',
    'open',
    '--group',
    team,
    '--due',
    '14d',
    '--default',
    'expire',
    '-o',
    'json',
  ]);
  t.is(opened.code, 0, opened.stderr);
  const review = JSON.parse(opened.stdout) as { uid: string; itemCount: number };
  t.is(review.itemCount, 2);

  const shown = await arbor(['reviews', 'show', review.uid]);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /^HOLDER\s+ROLE\s+LAST USED\s+UNUSED\s+DECISION\s+ITEM$/m);
  t.regex(shown.stdout, /deploy-bot\s+editor\s+never/);
  const json = await arbor(['reviews', 'show', review.uid, '-o', 'json']);
  const items = (JSON.parse(json.stdout) as { items: Array<{ uid: string; bindingUid: string }> })
    .items;
  const item = items.find((i) => i.bindingUid === botBinding)!;

  const usage = await arbor(['reviews', 'decide', item.uid, 'shorten', '--reason', 'x']);
  t.is(usage.code, 2, usage.stderr);
  const decided = await arbor([
    'reviews',
    'decide',
    item.uid,
    'shorten',
    '--expire-in',
    '7d',
    '--reason',
    'only for the launch',
  ]);
  t.is(decided.code, 0, decided.stderr);
  t.regex(decided.stdout, /shorten \(deploy-bot as editor\)/);
  const binding = await s.admin.get(`/iam/v2beta1/roleBindings/${botBinding}`);
  t.truthy(binding.body.expireTime);

  const listed = await arbor(['reviews', 'list', '--group', team]);
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, /OPEN\s+\S+\s+1\/2\s+expire/);

  const set = await arbor(['reviews', 'schedule', '--group', team, '--every', '90d']);
  t.is(set.code, 0, set.stderr);
  t.regex(set.stdout, /every 90d, due in 14d, default keep/);
  const off = await arbor(['reviews', 'schedule', '--group', team, '--off']);
  t.is(off.code, 0, off.stderr);
  const none = await arbor(['reviews', 'schedule', '--group', team]);
  t.not(none.code, 0);
  t.regex(none.stderr, /NOT_FOUND|not found/i);
});
