import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, asIdentity, createIdentity } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { exchangeAt } from '../helpers/sts.js';
import type { Principal } from '../../src/auth/principal.js';
import { parseListRequest } from '../../src/core/list-request.js';
import { WHAT_CAN_LIST, WHO_CAN_LIST } from '../../src/resources/access/access.js';
import { AUDIT_LIST } from '../../src/resources/audit/audit-event.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { freshDatabase } from '../helpers/db.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * Cost budgets (docs/operations.md, "Budgets"): past a caller's budget an expensive call is
 * refused RESOURCE_EXHAUSTED, 429 with Retry-After on REST, with RetryInfo and QuotaFailure
 * on both doors; an organization's budget caps its callers together; the admin token is
 * exempt; two workers over one database spend from one count. Each test has a server of
 * its own with a small budget, so no test spends another's.
 */
const SIM = '/iam/v2beta1/access:simulate';
const T = 'type.googleapis.com/google.rpc.';

/** A simulation any caller may ask for: it names a group nobody can see (a refusal is fine). */
const body = (org: string) => ({
  changes: [{ deleteGroup: { uid: `${org}/0123456789abcdef` } }],
});

async function identityClient(s: TestServer, org: string, name: string) {
  const uid = await createIdentity(s.admin, org, name);
  const token = await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${name}` });
  return { uid, client: s.client(token.token), token: token.token };
}

/** Simulations until one is refused (at most `max`); how many went through, and the refusal. */
async function untilRefused(c: Client, org: string, max: number) {
  for (let i = 0; i < max; i++) {
    const res = await c.post(SIM, body(org));
    if (res.status === 429) return { passed: i, refusal: res };
    if (res.status !== 200) throw new Error(`simulate: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { passed: max, refusal: undefined };
}

function detail(status: any, type: string): any {
  return (status?.details ?? []).find((d: any) => d['@type'] === `${T}${type}`);
}

test('past its budget a caller is refused 429 with Retry-After on REST, and RESOURCE_EXHAUSTED with RetryInfo on gRPC', async (t) => {
  const s: GrpcTestServer = await startGrpcServer({
    ARBOR_BUDGET_SIMULATE: '3/60',
    ARBOR_BUDGET_SIMULATE_ORG: '100/60',
  });
  t.teardown(() => s.close());
  const org = await createGroup(s.admin, 'budget-org');
  const alice = await identityClient(s, org, 'alice');

  const { passed, refusal } = await untilRefused(alice.client, org, 10);
  t.is(passed, 3);
  t.truthy(refusal);
  const retryAfter = Number(refusal!.headers.get('retry-after'));
  t.true(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
  t.is(refusal!.body.code, 8);
  t.regex(refusal!.body.message, /^Resource exhausted: the simulate budget of this identity/);
  t.deepEqual(detail(refusal!.body, 'ErrorInfo')?.reason, 'RESOURCE_EXHAUSTED');
  t.deepEqual(detail(refusal!.body, 'QuotaFailure')?.violations, [
    {
      subject: `identity:${alice.uid}`,
      description: 'the simulate budget of this identity (3 calls a window) is spent',
    },
  ]);
  t.is(detail(refusal!.body, 'RetryInfo')?.retryDelay, `${retryAfter}s`);

  // The same caller on the gRPC door: the same budget, the same refusal.
  const g = await s.grpc(alice.token).call(AccessService, 'SimulateAccess', body(org));
  t.false(g.ok);
  t.is(g.code, 8);
  t.truthy(detail((g as any).status, 'RetryInfo')?.retryDelay);
  t.is(detail((g as any).status, 'QuotaFailure')?.violations[0]?.subject, `identity:${alice.uid}`);

  // Another caller of the same organization still has its own budget.
  const bob = await identityClient(s, org, 'bob');
  t.is((await bob.client.post(SIM, body(org))).status, 200);

  // Alice's refused calls spent nothing of the organization's budget: 3 of hers, 1 of Bob's.
  const row = await s.arbor.db
    .knex('budget_points')
    .where({ key: `simulate:organization:${org}` })
    .first<{ points: number }>('points');
  t.is(row?.points, 4);

  const metrics = await s.arbor.metrics.registry.metrics();
  t.regex(metrics, /arbor_budget_refused_total\{budget="simulate",scope="identity"\} 2/);
  t.regex(metrics, /arbor_budget_spent_total\{budget="simulate"\} 4/);
  t.notRegex(metrics, new RegExp(alice.uid), 'no series names a caller');
});

test("an organization's budget caps its callers together", async (t) => {
  const s = await startServer({
    ARBOR_BUDGET_SIMULATE: '100/60',
    ARBOR_BUDGET_SIMULATE_ORG: '4/60',
  });
  t.teardown(() => s.close());
  const org = await createGroup(s.admin, 'budget-org');
  const other = await createGroup(s.admin, 'other-org');
  const alice = await identityClient(s, org, 'alice');
  const bob = await identityClient(s, org, 'bob');
  const carol = await identityClient(s, other, 'carol');

  for (const c of [alice, bob, alice, bob]) t.is((await c.client.post(SIM, body(org))).status, 200);
  const refused = await bob.client.post(SIM, body(org));
  t.is(refused.status, 429);
  t.is(detail(refused.body, 'QuotaFailure')?.violations[0]?.subject, `organization:${org}`);
  t.is((await alice.client.post(SIM, body(org))).status, 429);
  // Another organization's caller spends from its own organization's budget.
  t.is((await carol.client.post(SIM, body(other))).status, 200);
});

test('the admin token spends no budget', async (t) => {
  const s = await startServer({ ARBOR_BUDGET_SIMULATE: '1/60', ARBOR_BUDGET_SIMULATE_ORG: '1/60' });
  t.teardown(() => s.close());
  const org = await createGroup(s.admin, 'budget-org');
  for (let i = 0; i < 5; i++) t.is((await s.admin.post(SIM, body(org))).status, 200);
});

test('ARBOR_BUDGETS=off refuses nothing', async (t) => {
  const s = await startServer({ ARBOR_BUDGETS: 'off', ARBOR_BUDGET_SIMULATE: '1/60' });
  t.teardown(() => s.close());
  const org = await createGroup(s.admin, 'budget-org');
  const alice = await identityClient(s, org, 'alice');
  t.is((await untilRefused(alice.client, org, 4)).passed, 4);
});

test('two workers over one database spend from one budget', async (t) => {
  const env = { ARBOR_BUDGET_SIMULATE: '4/60', ARBOR_BUDGET_SIMULATE_ORG: '100/60' };
  const db = await freshDatabase();
  const a = await startServer(env, { database: db });
  // b shares a's database and must not close it: a does.
  const b = await startServer(env, { database: { ...db, close: () => Promise.resolve() } });
  t.teardown(async () => {
    await b.close();
    await a.close();
  });
  const org = await createGroup(a.admin, 'budget-org');
  const alice = await identityClient(a, org, 'alice');
  // Each worker signs with keys of its own here: the caller holds a token from each.
  const onB = b.client(
    (await b.arbor.tokens.sign(alice.uid, { iss: ISSUER, sub: 'sub-alice' })).token,
  );
  for (const c of [alice.client, onB, alice.client, onB])
    t.is((await c.post(SIM, body(org))).status, 200);
  t.is((await onB.post(SIM, body(org))).status, 429);
  t.is((await alice.client.post(SIM, body(org))).status, 429);
});

test('an STS exchange is charged to the identity it assumes, and only when it succeeds', async (t) => {
  const s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_BUDGET_STS_EXCHANGE: '2/60',
  });
  const issuer = await TestIssuer.start();
  t.teardown(async () => {
    await issuer.stop();
    await s.close();
  });
  const aud = s.arbor.config.issuerUrl;
  const org = await createGroup(s.admin, 'budget-org');
  const sub = 'system:serviceaccount:apps:builder';
  const identity = await createIdentity(s.admin, org, 'builder', {
    issuer: issuer.url,
    subject: sub,
  });
  const exchange = async (token: string) => (await exchangeAt(s, token, { aud, identity })).status;

  // Tokens that fail, however many, spend nothing of the workload's budget.
  const forged = await issuer.mint({ sub, aud }, { key: await TestIssuer.strayKey() });
  for (let i = 0; i < 4; i++) t.is(await exchange(forged), 401);
  t.is(await exchange(await issuer.mint({ sub: 'someone-else', aud })), 403);
  // Two that succeed spend it; the third is refused before any work, with its details.
  t.is(await exchange(await issuer.mint({ sub, aud })), 200);
  t.is(await exchange(await issuer.mint({ sub, aud })), 200);
  const refused = await exchangeAt(s, await issuer.mint({ sub, aud }), { aud, identity });
  t.is(refused.status, 429);
  t.truthy(refused.headers.get('retry-after'));
  t.is(detail(refused.body, 'QuotaFailure')?.violations[0]?.subject, `identity:${identity}`);
  t.false('token' in refused.body);
});

test('every call of the budget table spends its class, whichever door calls the service', async (t) => {
  const env: Record<string, string> = {};
  for (const c of ['ACCESS_QUERY', 'ACCESS_REQUEST', 'AUDIT_READ', 'SIMULATE'])
    env[`ARBOR_BUDGET_${c}`] = '1/60';
  const s = await startServer(env);
  t.teardown(() => s.close());
  const org = await createGroup(s.admin, 'budget-org');
  const sv = s.arbor.services;
  const calls: Array<[string, (p: Principal) => Promise<unknown>]> = [
    ['simulate', (p) => sv.accessSimulator.simulate(p, body(org))],
    [
      'who-can',
      (p) =>
        sv.access.whoCan(
          p,
          parseListRequest({ group: org, capability: 'groups.list' }, WHO_CAN_LIST),
        ),
    ],
    ['what-can', (p) => sv.access.whatCan(p, parseListRequest({}, WHAT_CAN_LIST))],
    [
      'batch check',
      (p) => sv.access.batchCheck(p, { checks: [{ capability: 'groups.list', groupUid: org }] }),
    ],
    ['access request', (p) => sv.accessRequests.create(p, org, { role: 'viewer' })],
    ['audit read', (p) => sv.audit.list(p, parseListRequest({}, AUDIT_LIST))],
  ];
  const exhausted = (e: unknown) => (e as { code?: number }).code === 8;
  for (const [name, call] of calls) {
    // A caller of its own for each call: one class's budget is not another's.
    const uid = await createIdentity(s.admin, org, name.replace(' ', '-'));
    const first = await call(asIdentity(uid)).then(
      () => 'ok',
      (e: unknown) => (exhausted(e) ? 'exhausted' : 'refused otherwise'),
    );
    t.not(first, 'exhausted', name);
    const second = await call(asIdentity(uid)).then(
      () => 'ok',
      (e: unknown) => (exhausted(e) ? 'exhausted' : `refused otherwise: ${String(e)}`),
    );
    // batch check and who-can/what-can share one class (and so one budget) on purpose.
    t.is(second, 'exhausted', name);
  }
});
