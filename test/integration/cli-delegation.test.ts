import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor identities delegation-policy get|set|clear` and `arbor audit`'s actor chain, as
 * processes against a real Arbor (PGlite or PostgreSQL, by ARBOR_TEST_DB): an org's owner
 * lets an agent act for ci; a stranger and ci itself are refused as the API refuses them.
 */
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

let s: TestServer;
let home: string;
let org: string;
let ci: string;
let agent: string;
let owner: string;
let ciToken: string;
let agentToken: string;
let strangerToken: string;

const apiToken = async (uid: string, sub: string) =>
  (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub })).token;

test.before(async () => {
  s = await startServer({ LOG_LEVEL: 'silent' });
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-delegation-'));
  org = await createGroup(s.admin, 'cli-delegation');
  const other = await createGroup(s.admin, 'elsewhere');
  ci = await createIdentity(s.admin, org, 'ci');
  agent = await createIdentity(s.admin, org, 'agent');
  const o = await createIdentity(s.admin, org, 'owner');
  const stranger = await createIdentity(s.admin, other, 'stranger');
  await createBinding(s.admin, org, o, builtinRoleUid('owner'));
  await createBinding(s.admin, org, ci, builtinRoleUid('owner'));
  await createBinding(s.admin, org, agent, builtinRoleUid('viewer'));
  await createBinding(s.admin, other, stranger, builtinRoleUid('owner'));
  owner = await apiToken(o, 'sub-owner');
  ciToken = await apiToken(ci, 'sub-ci');
  agentToken = await apiToken(agent, 'sub-agent');
  strangerToken = await apiToken(stranger, 'sub-stranger');
});
test.after.always(async () => {
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

function arbor(args: string[], token = owner): Promise<CliRun> {
  return runArbor([...args, '--api', s.url], { HOME: home, ARBOR_TOKEN: token });
}

const POLICY = ['identities', 'delegation-policy'];

test.serial(
  'set, get and clear by names; the API’s bounds and refusals as exit codes',
  async (t) => {
    const set = await arbor([
      ...POLICY,
      'set',
      'cli-delegation/ci',
      '--actor',
      'cli-delegation/agent',
      '--capabilities',
      'groups.list,groups.create',
      '--max-lifetime',
      '15m',
    ]);
    t.is(set.code, 0, set.stderr);
    t.regex(set.stdout, /^identity:\s+cli-delegation\/ci$/m);
    t.regex(set.stdout, /^actors:\s+cli-delegation\/agent$/m);
    t.regex(set.stdout, /^capabilities:\s+groups\.create, groups\.list$/m);
    t.regex(set.stdout, /^max lifetime:\s+15m$/m);
    t.regex(set.stdout, /^set by:\s+cli-delegation\/owner$/m);

    const got = await arbor([...POLICY, 'get', ci, '-o', 'json']);
    t.is(got.code, 0, got.stderr);
    t.like(JSON.parse(got.stdout), {
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.create', 'groups.list'],
      maxLifetimeSeconds: 900,
    });
    const api = await s.admin.post('/iam/v2beta1/identities:getDelegationPolicy', {
      identityUid: ci,
    });
    t.deepEqual(JSON.parse(got.stdout), api.body, 'the CLI prints what the API answers');

    // Usage errors before any call: no actor, a lifetime that is not a duration.
    t.is((await arbor([...POLICY, 'set', ci, '--capabilities', 'groups.list'])).code, 2);
    const notDuration = await arbor([
      ...POLICY,
      'set',
      ci,
      '--actor',
      agent,
      '--capabilities',
      'groups.list',
      '--max-lifetime',
      'soon',
    ]);
    t.is(notDuration.code, 2, notDuration.stderr);
    // The API's bounds: a capability outside the catalogue, more than a day.
    const unknown = await arbor([
      ...POLICY,
      'set',
      ci,
      '--actor',
      agent,
      '--capabilities',
      'groups.everything',
    ]);
    t.is(unknown.code, 3, unknown.stderr);
    t.regex(unknown.stderr, /capability of the catalogue/);
    const long = await arbor([
      ...POLICY,
      'set',
      ci,
      '--actor',
      agent,
      '--capabilities',
      'groups.list',
      '--max-lifetime',
      '2d',
    ]);
    t.is(long.code, 3, long.stderr);

    // Attacks: a stranger cannot see ci (NOT_FOUND, as for a missing identity); the agent
    // sees ci (viewer) but may not update it (DENIED), so it cannot widen its own delegation.
    // Neither changes the policy.
    const strangerGet = await arbor([...POLICY, 'get', ci], strangerToken);
    t.is(strangerGet.code, 4, strangerGet.stderr);
    const strangerClear = await arbor([...POLICY, 'clear', ci], strangerToken);
    t.is(strangerClear.code, 4, strangerClear.stderr);
    const agentSet = await arbor(
      [...POLICY, 'set', ci, '--actor', agent, '--capabilities', 'groups.delete'],
      agentToken,
    );
    t.is(agentSet.code, 6, agentSet.stderr);
    const still = await arbor([...POLICY, 'get', ci, '-o', 'json']);
    t.deepEqual(JSON.parse(still.stdout), api.body, 'no refused command changed it');

    const cleared = await arbor([...POLICY, 'clear', 'cli-delegation/ci']);
    t.is(cleared.code, 0, cleared.stderr);
    t.regex(cleared.stdout, /removed the delegation policy of cli-delegation\/ci/);
    t.is((await arbor([...POLICY, 'get', ci])).code, 4);
    t.is((await arbor([...POLICY, 'clear', ci])).code, 4, 'nothing left to clear');
  },
);

test.serial(
  'arbor audit names a delegated change "agent for ci"; a change of its own, ci alone',
  async (t) => {
    t.is(
      (
        await arbor([
          ...POLICY,
          'set',
          ci,
          '--actor',
          agent,
          '--capabilities',
          'groups.create',
          '--capabilities',
          'groups.list',
        ])
      ).code,
      0,
    );
    const res = await fetch(`${s.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: ciToken,
        subject_token_type: ACCESS,
        actor_token: agentToken,
        actor_token_type: ACCESS,
      }),
    });
    const token = ((await res.json()) as { access_token: string }).access_token;
    const byAgent = await s.client(token).post(`/iam/v2beta1/groups/${org}`, { name: 'by-agent' });
    t.is(byAgent.status, 200, JSON.stringify(byAgent.body));
    const byCi = await s.client(ciToken).post(`/iam/v2beta1/groups/${org}`, { name: 'by-ci' });
    t.is(byCi.status, 200);

    const delegated = await arbor(['audit', byAgent.body.uid as string]);
    t.is(delegated.code, 0, delegated.stderr);
    t.regex(delegated.stdout, /cli-delegation\/agent for cli-delegation\/ci\s+create\s+Group/);
    const own = await arbor(['audit', byCi.body.uid as string]);
    t.is(own.code, 0, own.stderr);
    t.regex(own.stdout, /\scli-delegation\/ci\s+create\s+Group/);
    t.notRegex(own.stdout, / for /);
    const json = await arbor(['audit', byAgent.body.uid as string, '-o', 'json']);
    t.like(JSON.parse(json.stdout), [{ actors: [{ uid: agent, path: 'cli-delegation/agent' }] }]);
  },
);
