import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor can-i`, `arbor who-can` and `arbor identities test-token` as processes against a
 * real Arbor (PGlite or PostgreSQL, by ARBOR_TEST_DB) and a loopback OIDC issuer.
 */
let s: TestServer;
let issuer: TestIssuer;
let home: string;
let org: string;
let folder: string;
let alice: string;
let bob: string;
let aliceBinding: string;
let aliceToken: string;
const SUB = 'system:serviceaccount:ci:deployer';

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  issuer = await TestIssuer.start();
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-access-'));
  org = await createGroup(s.admin, 'cli-access');
  folder = await createGroup(s.admin, 'team', org);
  alice = await createIdentity(s.admin, org, 'alice');
  bob = await createIdentity(s.admin, folder, 'bob', { issuer: issuer.url, subject: SUB });
  const reader = await createRole(s.admin, org, 'reader', [
    'groups.list',
    'identity.list',
    'role_bindings.list',
    'roles.list',
  ]);
  const deleter = await createRole(s.admin, org, 'deleter', ['groups.list', 'groups.delete']);
  aliceBinding = await createBinding(s.admin, org, alice, reader);
  await createBinding(s.admin, folder, bob, deleter);
  aliceToken = (await s.arbor.tokens.sign(alice, { iss: 'https://x.example', sub: 'alice' })).token;
});
test.after.always(async () => {
  await issuer?.stop();
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

function arbor(args: string[], token = aliceToken): Promise<CliRun> {
  return runArbor([...args, '--api', s.url], { HOME: home, ARBOR_TOKEN: token });
}

test('can-i: yes (exit 0) with the proof under --explain, no (exit 1)', async (t) => {
  const yes = await arbor(['can-i', 'groups.list', '--group', folder, '--explain']);
  t.is(yes.code, 0, yes.stderr);
  t.regex(yes.stdout, /^yes\n/);
  // Groups by their names, the binding by its uid.
  t.true(yes.stdout.includes(`role reader bound at cli-access (binding ${aliceBinding})`));
  t.true(yes.stdout.includes('path: cli-access > cli-access/team'));
  const no = await arbor(['can-i', 'groups.delete', '--group', folder]);
  t.is(no.code, 1);
  t.is(no.stdout, 'no\n');
});

test('can-i --as: about another identity, as JSON; one you cannot see is exit 4', async (t) => {
  const r = await arbor(['can-i', 'groups.delete', '--group', folder, '--as', bob, '-o', 'json']);
  t.is(r.code, 0, r.stderr);
  const answer = JSON.parse(r.stdout);
  t.true(answer.allowed);
  t.is(answer.grants[0].groupUid, folder);
  const hidden = await createGroup(s.admin, 'cli-hidden');
  const stranger = await createIdentity(s.admin, hidden, 'stranger');
  const nf = await arbor(['can-i', 'groups.list', '--group', folder, '--as', stranger]);
  t.is(nf.code, 4, nf.stderr);
});

test('who-can: a table, JSON, pages', async (t) => {
  const table = await arbor(['who-can', 'groups.list', '--group', folder]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^IDENTITY\s+ROLES\s+BOUND AT\s+IDENTITY UID\n/);
  t.regex(table.stdout, new RegExp(`^cli-access/alice\\s+reader\\s+cli-access\\s+${alice}$`, 'm'));
  t.regex(
    table.stdout,
    new RegExp(`^cli-access/team/bob\\s+deleter\\s+cli-access/team\\s+${bob}$`, 'm'),
  );
  const json = await arbor(['who-can', 'groups.list', '--group', folder, '-o', 'json']);
  const uids = JSON.parse(json.stdout).map((h: { identityUid: string }) => h.identityUid);
  t.deepEqual(uids, [alice, bob].sort());
  const first = await arbor([
    'who-can',
    'groups.list',
    '--group',
    folder,
    '--page-size',
    '1',
    '-o',
    'name',
  ]);
  t.is(first.stdout, `${uids[0]}\n`);
  t.regex(first.stderr, /more: --page-token \S+/);
  const all = await arbor(['who-can', 'groups.list', '--group', folder, '--all', '-o', 'name']);
  t.is(all.stdout, uids.map((u: string) => `${u}\n`).join(''));
  const yaml = await arbor(['who-can', 'groups.delete', '--group', folder, '-o', 'yaml']);
  t.regex(yaml.stdout, new RegExp(`identityUid: ${bob}`));
});

test('identities test-token: each clause of a real token, and of claims that fail', async (t) => {
  const tokenFile = join(home, 'token.jwt');
  writeFileSync(tokenFile, `${await issuer.mint({ sub: SUB, aud: s.arbor.config.issuerUrl })}\n`);
  const yes = await arbor(['identities', 'test-token', bob, '--token-file', tokenFile]);
  t.is(yes.code, 0, yes.stderr);
  t.regex(yes.stdout, new RegExp(`^bob ${bob}: would assume\\n`));
  t.regex(yes.stdout, /CLAUSE\s+PASSED\s+REASON\n/);
  for (const clause of ['issuer', 'subject', 'audience', 'lifetime', 'signature'])
    t.regex(yes.stdout, new RegExp(`\\n${clause}\\s+yes\\s`), clause);

  const claimsFile = join(home, 'claims.yaml');
  writeFileSync(claimsFile, `iss: ${issuer.url}\nsub: someone-else\nexp: 1\n`);
  const no = await arbor(['identities', 'test-token', bob, '--claims-file', claimsFile]);
  t.is(no.code, 1, no.stderr);
  t.regex(no.stdout, /would NOT assume/);
  t.regex(
    no.stdout,
    /\nsubject\s+no\s+expected sub "system:serviceaccount:ci:deployer", saw "someone-else"/,
  );
  t.regex(no.stdout, /\nlifetime\s+no\s+expired/);
  t.notRegex(no.stdout, /signature/);

  // No identity: every claim-match identity the caller may list, as JSON.
  const all = await arbor(
    ['identities', 'test-token', '--token-file', tokenFile, '-o', 'json'],
    ADMIN_TOKEN,
  );
  t.is(all.code, 0, all.stderr);
  const results = JSON.parse(all.stdout).results as { identityUid: string; wouldAssume: boolean }[];
  t.deepEqual(
    results.filter((r) => r.wouldAssume).map((r) => r.identityUid),
    [bob],
  );
  const usage = await arbor(['identities', 'test-token', bob]);
  t.is(usage.code, 2);
});
