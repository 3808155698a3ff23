import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startMetricsServer } from '../../src/metrics/metrics-server.js';
import { createGroup } from '../helpers/fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let issuer: TestIssuer;
let metricsServer: Server;
let metricsUrl: string;

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  issuer = await TestIssuer.start();
  metricsServer = await startMetricsServer(s.arbor.metrics.registry, 0, '127.0.0.1');
  metricsUrl = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`;
});
test.after.always(async () => {
  metricsServer?.close();
  await issuer?.stop();
  await s?.close();
});

/** The value of one sample in the text exposition, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const got = Object.fromEntries(
      [...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]] as const),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

test.serial('metrics: requests are counted by route template, method and code', async (t) => {
  const org = await createGroup(s.admin, 'metrics-org');
  await s.admin.get(`/iam/v2beta1/groups/${org}`);
  await s.admin.get(`/iam/v2beta1/groups/${org}`);
  await s.admin.get(`/iam/v2beta1/groups/${'f'.repeat(40)}`);
  await s.client().get('/iam/v2beta1/groups');
  await s.admin.get('/no/such/route');

  const res = await fetch(metricsUrl);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await res.text();
  // One template per operation: Get and List (or a root Create) are separate series.
  const route = '/iam/v2beta1/groups/{*uid}';
  const collection = '/iam/v2beta1/groups';
  t.is(sample(text, 'arbor_http_requests_total', { route, method: 'GET', code: '200' }), 2);
  t.is(sample(text, 'arbor_http_requests_total', { route, method: 'GET', code: '404' }), 1);
  t.is(
    sample(text, 'arbor_http_requests_total', { route: collection, method: 'POST', code: '200' }),
    1,
  );
  t.is(
    sample(text, 'arbor_http_requests_total', { route: '(unmatched)', method: 'GET', code: '404' }),
    1,
  );
  // No raw path (with its uid) ever becomes a label.
  t.false(text.includes(org));
  t.is(
    sample(text, 'arbor_http_request_duration_seconds_count', {
      route,
      method: 'GET',
      code: '200',
    }),
    2,
  );
  t.true(
    (sample(text, 'arbor_http_request_duration_seconds_bucket', {
      route,
      method: 'GET',
      code: '200',
      le: '+Inf',
    }) ?? 0) === 2,
  );
  // The database: every query is timed, and the pool is visible.
  t.true((sample(text, 'arbor_db_query_duration_seconds_count', { outcome: 'ok' }) ?? 0) > 0);
  t.true((sample(text, 'arbor_db_pool_connections', { state: 'max' }) ?? 0) >= 1);
});

test.serial(
  'metrics: STS exchanges by outcome, and the upstream fetches behind them',
  async (t) => {
    const org = await createGroup(s.admin, 'metrics-sts');
    const id = await s.admin.post(`/iam/v2beta1/identities/${org}`, {
      name: 'builder',
      claimMatch: { issuer: issuer.url, subject: 'ci' },
    });
    t.is(id.status, 200);
    const aud = s.arbor.config.issuerUrl;
    const q = (identity: string) =>
      `/sts/exchange?${new URLSearchParams({ aud, identity }).toString()}`;
    const good = await s.client(await issuer.mint({ sub: 'ci', aud })).get(q(id.body.uid));
    t.is(good.status, 200);
    const wrongSub = await s.client(await issuer.mint({ sub: 'other', aud })).get(q(id.body.uid));
    t.is(wrongSub.status, 403);
    const junk = await s.client('not-a-jwt').get(q(id.body.uid));
    t.is(junk.status, 401);

    const text = await (await fetch(metricsUrl)).text();
    t.is(sample(text, 'arbor_sts_exchanges_total', { outcome: 'issued' }), 1);
    t.is(sample(text, 'arbor_sts_exchanges_total', { outcome: 'PERMISSION_DENIED' }), 1);
    t.is(sample(text, 'arbor_sts_exchanges_total', { outcome: 'UNAUTHENTICATED' }), 1);
    t.is(sample(text, 'arbor_upstream_fetches_total', { kind: 'discovery', outcome: 'ok' }), 1);
    t.is(sample(text, 'arbor_upstream_fetches_total', { kind: 'jwks', outcome: 'ok' }), 1);
    t.is(sample(text, 'arbor_upstream_fetch_duration_seconds_count', { kind: 'jwks' }), 1);
  },
);
