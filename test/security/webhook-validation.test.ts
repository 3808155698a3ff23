import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { FAST_DELIVERY, startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { createGroup } from '../helpers/fixtures.js';
import { fields } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Two organizations may point subscriptions at the same URL, and the
 * documented verification (signature, `aud` = the sink) let org B's events verify at org
 * A's receiver. Now a sink must agree to each subscription in the CloudEvents webhook
 * validation handshake before anything is delivered, and every token names the
 * subscription and its group, which receivers pin.
 */

const SUBS = '/events/v2beta1/subscriptions';

let s: TestServer;
const closers: Array<() => Promise<void>> = [];

test.before(async () => {
  s = await startServer({ ...FAST_DELIVERY });
  s.arbor.delivery.start();
});
test.after.always(async () => {
  await s?.close();
  for (const c of closers) await c();
});

interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** The token's claims, read without verifying: what arrived, for the assertions. */
  claims: Record<string, unknown>;
  accepted: boolean;
}

/**
 * A receiver written the way docs/events.md tells one to: it verifies every token against
 * Arbor's JWKS, `iss` and `aud` = its own URL, agrees in the handshake only to
 * subscriptions of the group it pins, and accepts only deliveries whose token names that
 * group and whose body matches `body_sha256`.
 */
async function pinnedReceiver(pinnedGroup: () => string) {
  const seen: Seen[] = [];
  const jwks = createRemoteJWKSet(new URL(`${s.url}/.well-known/jwks.json`));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const claims = token ? decodeJwt(token) : {};
      void (async () => {
        let ok = false;
        try {
          const { payload } = await jwtVerify(token, jwks, {
            issuer: s.arbor.config.issuerUrl,
            audience: url,
          });
          ok = payload.subscription_group === pinnedGroup();
          if (req.method === 'POST') {
            ok &&= payload.body_sha256 === createHash('sha256').update(raw).digest('base64url');
          }
        } catch {
          ok = false;
        }
        seen.push({ method: req.method ?? '', headers: req.headers, raw, claims, accepted: ok });
        if (req.method === 'OPTIONS') {
          if (ok)
            res.setHeader('webhook-allowed-origin', String(req.headers['webhook-request-origin']));
          res.statusCode = 200;
        } else res.statusCode = ok ? 204 : 401;
        res.end();
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { url, seen };
}

async function subscribe(org: string, sink: string, extra: Record<string, unknown> = {}) {
  const r = await s.admin.post(`${SUBS}/${org}`, { name: 'hook', sink, ...extra });
  if (r.status !== 200) throw new Error(`subscribe: ${JSON.stringify(r.body)}`);
  return r.body as { uid: string; status: Record<string, unknown> };
}

const status = async (uid: string) => (await s.admin.get(`${SUBS}/${uid}`)).body.status;

async function sink(): Promise<EventSink> {
  const k = await startEventSink();
  closers.push(() => k.close());
  return k;
}

test("webhook validation: another tenant's subscription to a pinned receiver delivers nothing to it", async (t) => {
  const orgA = await createGroup(s.admin, 'receiver-owner');
  const orgB = await createGroup(s.admin, 'intruder');
  const r = await pinnedReceiver(() => orgA);
  const subA = await subscribe(orgA, r.url);
  const subB = await subscribe(orgB, r.url);
  const a1 = await createGroup(s.admin, 'a1', orgA);
  await createGroup(s.admin, 'b1', orgB);
  await createGroup(s.admin, 'b2', orgB);

  const refusedB = await until('B refused by the receiver', async () => {
    const st = await status(subB.uid);
    return st.validation === 'REFUSED' ? st : undefined;
  });
  t.regex(refusedB.lastError, /did not agree to the webhook validation handshake/);
  t.truthy(refusedB.validationTime);
  t.is(refusedB.deliveredCount, '0');
  await until("A's two events", () => r.seen.filter((x) => x.method === 'POST').length >= 2);

  const fromB = r.seen.filter((x) => x.claims.sub === subB.uid);
  t.true(fromB.length > 0, "B's sink was asked");
  t.deepEqual(
    fromB.map((x) => x.method),
    fromB.map(() => 'OPTIONS'),
    "nothing of B's but the handshake reached A's receiver",
  );
  t.true(
    r.seen.every((x) => x.accepted || x.method === 'OPTIONS'),
    'every delivery verified',
  );

  const posts = r.seen.filter((x) => x.method === 'POST');
  t.deepEqual(
    posts.map((x) => JSON.parse(x.raw).subject),
    [subA.uid, a1],
  );
  for (const p of posts) {
    t.is(p.claims.sub, subA.uid);
    t.is(p.claims.subscription_group, orgA);
    t.is(p.headers['webhook-request-origin'], new URL(s.arbor.config.issuerUrl).hostname);
  }
  const handshakeA = r.seen.find((x) => x.method === 'OPTIONS' && x.claims.sub === subA.uid)!;
  t.is(handshakeA.headers['webhook-request-origin'], new URL(s.arbor.config.issuerUrl).hostname);
  t.is(handshakeA.claims.subscription_group, orgA);
  t.is(handshakeA.claims.body_sha256, undefined, 'a handshake token is never a delivery token');
  const stA = await status(subA.uid);
  t.is(stA.validation, 'ALLOWED');
  t.truthy(stA.validationTime);
});

test('webhook validation: a sink that does not answer the handshake receives no event', async (t) => {
  // A generic server: 200 to OPTIONS without the header, or 405, is no consent (spec §4.2).
  let posts = 0;
  const server = createServer((req, res) => {
    req.resume();
    if (req.method === 'POST') posts++;
    res.statusCode = req.url === '/405' && req.method === 'OPTIONS' ? 405 : 200;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const org = await createGroup(s.admin, 'no-consent');
  const plain = await subscribe(org, `${base}/plain`);
  const refusing = await subscribe(org, `${base}/405`, { name: 'other' });
  await createGroup(s.admin, 'g', org);
  // plain's queue: its own creation, the other subscription's, the group.
  for (const [sub, detail, pending] of [
    [plain, 'no WebHook-Allowed-Origin', '3'],
    [refusing, 'HTTP 405', '2'],
  ] as const) {
    const st = await until('refused', async () => {
      const x = await status(sub.uid);
      return x.validation === 'REFUSED' && x.consecutiveFailures >= 2 ? x : undefined;
    });
    t.true(String(st.lastError).includes(detail), st.lastError);
    t.is(st.pendingCount, pending, 'held back, not dropped');
  }
  t.is(posts, 0);
});

test('webhook validation: the state is server-owned, and a new sink is asked again', async (t) => {
  const org = await createGroup(s.admin, 'owned');
  const first = await sink();
  const second = await sink();
  second.setConsent('refuse');

  // Whatever a client writes, the state is the sink's answer.
  const sub = await subscribe(org, first.url, {
    status: { validation: 'ALLOWED', allowedRate: 1 },
  });
  t.is(sub.status.validation, 'PENDING');
  t.is(sub.status.allowedRate, undefined);
  const top = await s.admin.post(`${SUBS}/${org}`, {
    name: 'x',
    sink: first.url,
    validation: 'ALLOWED',
  });
  t.is(top.status, 400);
  t.deepEqual(fields(top.body), ['validation']);
  await until('allowed', async () => (await status(sub.uid)).validation === 'ALLOWED');
  t.is(first.handshakes.length, 1);

  // A new sink has agreed to nothing: the subscription is PENDING again and the new sink
  // is asked before anything is sent to it.
  const moved = await s.admin.patch(`${SUBS}/${sub.uid}`, {
    sink: second.url,
    status: { validation: 'ALLOWED' },
  });
  t.is(moved.status, 200);
  t.is(moved.body.status.validation, 'PENDING');
  t.is(moved.body.status.validationTime, undefined);
  await createGroup(s.admin, 'after-move', org);
  await until('second sink refused', async () => (await status(sub.uid)).validation === 'REFUSED');
  t.true(second.handshakes.length >= 1);
  t.is(second.requests.length, 0);

  // Any other update leaves an agreed sink agreed.
  const third = await sink();
  const other = await subscribe(org, third.url, { name: 'kept' });
  await until('kept allowed', async () => (await status(other.uid)).validation === 'ALLOWED');
  const renamed = await s.admin.patch(`${SUBS}/${other.uid}`, {
    description: 'd',
    sink: third.url,
  });
  t.is(renamed.body.status.validation, 'ALLOWED');
});

test("webhook validation: a sink's allowed rate is shown and kept to", async (t) => {
  const org = await createGroup(s.admin, 'rated');
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    if (req.method === 'OPTIONS') {
      res.setHeader('webhook-allowed-origin', '*');
      res.setHeader('webhook-allowed-rate', '120');
    } else arrivals.push(Date.now());
    res.statusCode = 204;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const sub = await subscribe(org, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  for (let i = 0; i < 3; i++) await createGroup(s.admin, `r${i}`, org);
  await until('four deliveries', () => arrivals.length >= 4);
  const st = await status(sub.uid);
  t.is(st.validation, 'ALLOWED');
  t.is(st.allowedRate, 120);
  // 120 a minute: one every 500 ms at most (less 20 ms: the database clock and this one).
  const gaps = arrivals.slice(1).map((a, i) => a - arrivals[i]!);
  t.log(`gaps between deliveries (ms): ${gaps.join(', ')}`);
  t.true(
    gaps.every((g) => g >= 480),
    gaps.join(','),
  );
});
