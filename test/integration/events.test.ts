import { createHash } from 'node:crypto';
import test from 'ava';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { HttpSinkTransport } from '../../src/outbound/http-sink-transport.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole, fields } from '../helpers/iam-fixtures.js';
import { FAST_DELIVERY, startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { startServer, type TestServer } from '../helpers/server.js';

const SUBS = '/events/v2beta1/subscriptions';

/** Fast polling and retries so the tests wait on behaviour, not on timers. */
const FAST = FAST_DELIVERY;

let s: TestServer;
let root: string;
const sinks: EventSink[] = [];

async function sink(mode: 'up' | 'down' = 'up'): Promise<EventSink> {
  const k = await startEventSink(mode);
  sinks.push(k);
  return k;
}

async function subscribe(
  server: TestServer,
  group: string,
  sinkUrl: string,
  extra: Record<string, unknown> = {},
) {
  const res = await server.admin.post(`${SUBS}/${group}`, {
    name: 'hook',
    sink: sinkUrl,
    ...extra,
  });
  if (res.status !== 200) throw new Error(`subscribe: ${JSON.stringify(res.body)}`);
  return res.body as { uid: string; status: { state: string } };
}

const typesOf = (k: EventSink) => k.accepted().map((r) => r.body.type as string);

// The tests that start a second server run serially (AVA runs them first): opening an
// embedded database blocks the event loop for seconds, and the keep-alive sockets of
// concurrent tests would then race the server's idle timeout (ECONNRESET).
test.before(async () => {
  s = await startServer(FAST);
  s.arbor.delivery.start();
  root = await createGroup(s.admin, 'events-root');
});
test.after.always(async () => {
  await s?.close();
  for (const k of sinks) await k.close();
});

test('delivery: a receiver gets CloudEvents whose JWT verifies against the published JWKS', async (t) => {
  const k = await sink();
  const org = await createGroup(s.admin, 'jwt', root);
  const sub = await subscribe(s, org, k.url);
  const g = await createGroup(s.admin, 'team', org);
  await s.admin.patch(`/iam/v2beta1/groups/${g}`, { description: 'renamed' });
  await until('three events', () => k.accepted().length >= 3);

  t.deepEqual(typesOf(k), [
    'dev.arbor.events.subscription.created.v1',
    'dev.arbor.iam.group.created.v1',
    'dev.arbor.iam.group.updated.v1',
  ]);
  const jwks = createRemoteJWKSet(new URL(`${s.url}/.well-known/jwks.json`));
  for (const r of k.accepted()) {
    t.regex(String(r.headers['content-type']), /^application\/cloudevents\+json/);
    const ce = r.body;
    t.is(ce.specversion, '1.0');
    t.is(ce.source, s.arbor.config.issuerUrl);
    t.is(ce.datacontenttype, 'application/json');
    t.truthy(Date.parse(ce.time));
    const token = /^Bearer (.+)$/.exec(String(r.headers.authorization))![1]!;
    const { payload } = await jwtVerify(token, jwks, {
      issuer: s.arbor.config.issuerUrl,
      audience: k.url,
    });
    t.is(payload.sub, sub.uid);
    t.is(payload.subscription_group, org);
    t.is(payload.jti, ce.id);
    t.is(r.headers['webhook-request-origin'], new URL(s.arbor.config.issuerUrl).hostname);
    t.is(payload.body_sha256, createHash('sha256').update(r.raw).digest('base64url'));
    // A token for one sink is not a token for Arbor's API.
    t.is((await s.client(token).get(`/iam/v2beta1/groups/${org}`)).status, 401);
  }
  const created = k.accepted()[1]!.body;
  t.is(created.subject, g);
  t.is(created.data.uid, g);
  t.is(created.data.name, 'team');
  t.is(created.arboractor, 'admin');
  t.is(k.accepted()[2]!.body.data.description, 'renamed');
  // The event id is the audit record's id.
  const audit = await s.admin.get(`/audit/v2beta1/events?resource_uid=${g}&order_by=time%20asc`);
  t.deepEqual(
    audit.body.events.map((e: { id: string }) => e.id),
    k
      .accepted()
      .slice(1)
      .map((r) => r.body.id),
  );
  // The sink agreed once, in the webhook validation handshake, before the first delivery.
  t.is(k.handshakes.length, 1);
  const hs = k.handshakes[0]!;
  t.is(hs.headers['webhook-request-origin'], new URL(s.arbor.config.issuerUrl).hostname);
  const hsToken = /^Bearer (.+)$/.exec(String(hs.headers.authorization))![1]!;
  const { payload: hsClaims } = await jwtVerify(hsToken, jwks, {
    issuer: s.arbor.config.issuerUrl,
    audience: k.url,
  });
  t.is(hsClaims.sub, sub.uid);
  t.is(hsClaims.subscription_group, org);
  t.is(hsClaims.body_sha256, undefined);
  const status = (await s.admin.get(`${SUBS}/${sub.uid}`)).body.status;
  t.is(status.state, 'ACTIVE');
  t.is(status.validation, 'ALLOWED');
  t.is(status.deliveredCount, '3');
  t.is(status.pendingCount, '0');
});

test('delivery: a type filter and the subtree decide what a subscription receives', async (t) => {
  const k = await sink();
  const org = await createGroup(s.admin, 'filter', root);
  const team = await createGroup(s.admin, 'team', org);
  await subscribe(s, team, k.url, { types: ['dev.arbor.iam.group.*'] });
  await createGroup(s.admin, 'outside', org); // above the subscription: not delivered
  const inside = await createGroup(s.admin, 'inside', team);
  await createIdentity(s.admin, team, 'not-a-group'); // filtered out by type
  await s.admin.delete(`/iam/v2beta1/groups/${inside}`);
  await until('two events', () => k.accepted().length >= 2);
  await new Promise((r) => setTimeout(r, 300));
  t.deepEqual(typesOf(k), ['dev.arbor.iam.group.created.v1', 'dev.arbor.iam.group.deleted.v1']);
  t.is(k.accepted()[1]!.body.data.name, 'inside', 'a delete carries the last state');
});

test('delivery: a receiver down for a while gets every event afterwards, in order, once', async (t) => {
  const k = await sink('down');
  const org = await createGroup(s.admin, 'outage', root);
  const sub = await subscribe(s, org, k.url);
  const made: string[] = [];
  for (let i = 0; i < 10; i++) made.push(await createGroup(s.admin, `g${i}`, org));
  const failing = await until('failures on the status', async () => {
    const st = (await s.admin.get(`${SUBS}/${sub.uid}`)).body.status;
    return st.consecutiveFailures >= 3 ? st : undefined;
  });
  t.is(failing.state, 'ACTIVE');
  t.is(failing.lastError, 'sink answered HTTP 503');
  t.is(failing.pendingCount, '11');
  k.setMode('up');
  await until('eleven events', () => k.accepted().length >= 11);
  await new Promise((r) => setTimeout(r, 300));
  const accepted = k.accepted();
  t.is(accepted.length, 11);
  t.deepEqual(
    accepted.slice(1).map((r) => r.body.subject),
    made,
  );
  t.is(new Set(accepted.map((r) => r.body.id)).size, 11, 'nothing acknowledged is sent again');
  const st = (await s.admin.get(`${SUBS}/${sub.uid}`)).body.status;
  t.is(st.consecutiveFailures, 0);
  t.is(st.pendingCount, '0');
});

test.serial(
  'delivery: after N failures a subscription is dead-lettered; an update resumes it',
  async (t) => {
    const dl = await startServer({ ...FAST, ARBOR_EVENTS_MAX_ATTEMPTS: '3' });
    try {
      dl.arbor.delivery.start();
      const k = await sink('down');
      const org = await createGroup(dl.admin, 'dead');
      const sub = await subscribe(dl, org, k.url);
      await createGroup(dl.admin, 'one', org);
      const dead = await until('dead letter', async () => {
        const st = (await dl.admin.get(`${SUBS}/${sub.uid}`)).body.status;
        return st.state === 'DEAD_LETTER' ? st : undefined;
      });
      t.is(dead.consecutiveFailures, 3);
      t.truthy(dead.deadLetterTime);
      t.is(dead.pendingCount, '2');
      const tries = k.requests.length;
      await new Promise((r) => setTimeout(r, 500));
      t.is(k.requests.length, tries, 'a dead-lettered subscription is not tried');
      // Events keep queueing while dead-lettered: nothing is lost.
      await createGroup(dl.admin, 'two', org);
      k.setMode('up');
      const resumed = await dl.admin.patch(`${SUBS}/${sub.uid}`, { description: 'fixed' });
      t.is(resumed.body.status.state, 'ACTIVE');
      await until('four events', () => k.accepted().length >= 4);
      t.deepEqual(
        k.accepted().map((r) => r.body.type),
        [
          'dev.arbor.events.subscription.created.v1',
          'dev.arbor.iam.group.created.v1',
          'dev.arbor.iam.group.created.v1',
          'dev.arbor.events.subscription.updated.v1',
        ],
      );
    } finally {
      await dl.close();
    }
  },
);

test.serial(
  'subscriptions: private sinks are refused unless configured, at create and on the wire',
  async (t) => {
    const strict = await startServer();
    try {
      const org = await createGroup(strict.admin, 'strict');
      for (const sinkUrl of [
        'http://hooks.example.com/x',
        'https://127.0.0.1/x',
        'https://localhost/x',
        'https://[::1]/x',
        'https://10.1.2.3/x',
        'https://169.254.169.254/latest',
      ]) {
        const res = await strict.admin.post(`${SUBS}/${org}`, { name: 'x', sink: sinkUrl });
        t.is(res.status, 400, sinkUrl);
        t.deepEqual(fields(res.body), ['sink']);
      }
      const ok = await strict.admin.post(`${SUBS}/${org}`, {
        name: 'x',
        sink: 'https://hooks.example.com/x',
      });
      t.is(ok.status, 200);
    } finally {
      await strict.close();
    }
    const k = await sink();
    const transport = new HttpSinkTransport({ allowPrivate: false, timeoutMs: 5_000 });
    await t.throwsAsync(transport.post(k.url, {}, '{}'), { message: /not allowed/ });
    await t.throwsAsync(transport.post(k.url.replace('127.0.0.1', 'localhost'), {}, '{}'), {
      message: /not allowed/,
    });
    t.is(k.requests.length, 0);
    await t.throwsAsync(transport.options(k.url, {}), { message: /not allowed/ });
    t.is(k.requests.length + k.handshakes.length, 0);
    const open = new HttpSinkTransport({ allowPrivate: true });
    t.is((await open.post(k.url, {}, '{}')).status, 204);
    const hs = await open.options(k.url, { 'webhook-request-origin': 'arbor.example' });
    t.is(hs.headers['webhook-allowed-origin'], 'arbor.example');
    open.close();
    transport.close();
  },
);

test('subscriptions: CRUD and list follow the common contract; viewers cannot see them', async (t) => {
  const org = await createGroup(s.admin, 'crud', root);
  const bad = await s.admin.post(`${SUBS}/${org}`, { name: 'x', sink: 'ftp://x', types: ['A B'] });
  t.is(bad.status, 400);
  t.deepEqual(fields(bad.body).sort(), ['sink', 'types.0']);
  const a = await subscribe(s, org, 'https://a.example.com/', { types: ['dev.arbor.iam.*'] });
  t.is(
    (await s.admin.post(`${SUBS}/${org}`, { name: 'hook', sink: 'https://b.example.com/' })).status,
    409,
  );
  const list = await s.admin.get(`${SUBS}?uidp.children_of=${org}`);
  t.is(list.status, 200);
  t.deepEqual(
    list.body.subscriptions.map((x: { uid: string }) => x.uid),
    [a.uid],
  );
  const up = await s.admin.patch(`${SUBS}/${a.uid}?update_mask=types`, {});
  t.deepEqual(up.body.types, []);
  t.is(
    (await s.admin.delete(`/iam/v2beta1/groups/${org}`)).status,
    400,
    'group keeps its subscriptions',
  );

  const viewer = await createIdentity(s.admin, org, 'viewer');
  await createBinding(s.admin, org, viewer, builtinRoleUid('viewer'));
  const { token } = await s.arbor.tokens.sign(viewer, { iss: 'https://t.invalid', sub: viewer });
  const asViewer = s.client(token);
  t.deepEqual((await asViewer.get(`${SUBS}?uidp.children_of=${org}`)).body.subscriptions, []);
  t.is((await asViewer.get(`${SUBS}/${a.uid}`)).status, 404);
  t.is(
    (await asViewer.post(`${SUBS}/${org}`, { name: 'v', sink: 'https://v.example.com' })).status,
    403,
  );

  // subscriptions.create alone is not enough: events carry the subtree's audit trail.
  const hooker = await createIdentity(s.admin, org, 'hooker');
  const role = await createRole(s.admin, org, 'hooks-only', [
    'groups.list',
    'subscriptions.create',
    'subscriptions.list',
  ]);
  await createBinding(s.admin, org, hooker, role);
  const h = await s.arbor.tokens.sign(hooker, { iss: 'https://t.invalid', sub: hooker });
  const denied = await s
    .client(h.token)
    .post(`${SUBS}/${org}`, { name: 'sneaky', sink: 'https://v.example.com' });
  t.is(denied.status, 403);
  t.regex(denied.body.message, /audit\.list/);

  t.is((await s.admin.delete(`${SUBS}/${a.uid}`)).status, 200);
  t.is((await s.admin.get(`${SUBS}/${a.uid}`)).status, 404);
});
