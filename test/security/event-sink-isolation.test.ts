import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { FAST_DELIVERY, startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { createGroup } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * One tenant's sink stalled every tenant's events. The sink timeout
 * was a socket idle timeout, the transport waited for the whole response body, and the
 * worker waited for every sink of a round before the next. Hostile sinks here: one answers
 * 200 and then trickles its body a byte every 2 s, one never answers, one trickles its
 * response head. Another tenant's events must still arrive promptly, and the silent sinks
 * must fail at the configured whole-request deadline.
 */

const SUBS = '/events/v2beta1/subscriptions';
/** The whole-request deadline, longer than BOUND_MS: isolation, not the deadline, is tested. */
const DEADLINE_MS = 5_000;
/** How late another tenant's event may arrive (a normal delivery takes ~100 ms here). */
const BOUND_MS = 2_500;

let s: TestServer;
const closers: Array<() => Promise<void> | void> = [];

function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<string> {
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () => {
      r(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    }),
  );
}

/** Answers the handshake, then answers every delivery 200 and trickles its body forever. */
async function tricklingSink(): Promise<{ url: string; posts: () => number }> {
  let posts = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server = createHttpServer((req, res) => {
    req.resume();
    if (req.method === 'OPTIONS') {
      res.setHeader('webhook-allowed-origin', String(req.headers['webhook-request-origin']));
      res.end();
      return;
    }
    posts++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('.');
    const t = setInterval(() => res.write('.'), 2_000);
    timers.add(t);
    res.on('close', () => clearInterval(t));
  });
  const url = await listen(server);
  closers.push(async () => {
    for (const t of timers) clearInterval(t);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { url, posts: () => posts };
}

/** A TCP server that takes requests and never completes an answer (or a head, slowly). */
async function silentSink(trickleHead: boolean): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => undefined);
    sock.once('data', () => {
      requests++;
      if (!trickleHead) return;
      // A status line and then one header line a second: the head never ends, and the
      // socket is never idle.
      sock.write('HTTP/1.1 200 OK\r\n');
      const t = setInterval(() => sock.write('x-slow: a\r\n'), 1_000);
      sock.on('close', () => clearInterval(t));
    });
  });
  const url = await listen(server);
  closers.push(async () => {
    for (const sock of sockets) sock.destroy();
    await new Promise((r) => server.close(r));
  });
  return { url, requests: () => requests };
}

async function subscribe(org: string, sink: string): Promise<string> {
  const r = await s.admin.post(`${SUBS}/${org}`, { name: 'hook', sink });
  if (r.status !== 200) throw new Error(`subscribe: ${JSON.stringify(r.body)}`);
  return (r.body as { uid: string }).uid;
}

const status = async (uid: string) => (await s.admin.get(`${SUBS}/${uid}`)).body.status;

test.before(async () => {
  s = await startServer({
    ...FAST_DELIVERY,
    ARBOR_EVENTS_SINK_TIMEOUT_MS: String(DEADLINE_MS),
  });
  s.arbor.delivery.start();
});
test.after.always(async () => {
  await s?.close();
  for (const c of closers) await c();
});

test('sink isolation: trickling and silent sinks delay no other tenant, and fail at the deadline', async (t) => {
  const trickle = await tricklingSink();
  const silent = await silentSink(false);
  const slowHead = await silentSink(true);
  const good: EventSink = await startEventSink();
  closers.push(() => good.close());

  const [tOrg, sOrg, hOrg, gOrg] = [
    await createGroup(s.admin, 'trickle-tenant'),
    await createGroup(s.admin, 'silent-tenant'),
    await createGroup(s.admin, 'slow-head-tenant'),
    await createGroup(s.admin, 'good-tenant'),
  ];
  const tSub = await subscribe(tOrg, trickle.url);
  const sSub = await subscribe(sOrg, silent.url);
  const hSub = await subscribe(hOrg, slowHead.url);
  await subscribe(gOrg, good.url);
  // The worker is inside a trickling delivery now (the silent sinks are reached, or not, in
  // the same way: what follows must not depend on it).
  await until('the trickling sink engaged', () => trickle.posts() > 0);

  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    await createGroup(s.admin, `t${i}`, tOrg); // more trickling deliveries queued
    const g = await createGroup(s.admin, `g${i}`, gOrg);
    const t0 = Date.now();
    await until(
      `the good tenant's event ${i} within ${BOUND_MS} ms`,
      () => good.accepted().some((r) => r.body.subject === g),
      BOUND_MS,
      10,
    );
    latencies.push(Date.now() - t0);
  }
  t.log(`good tenant's delivery latencies (ms): ${latencies.join(', ')}`);
  t.true(Math.max(...latencies) < BOUND_MS);

  // The trickling sink answered 200 each time: each of its deliveries counted at the status.
  const tDone = await until(
    'the trickling sink acknowledged its six events',
    async () => {
      const st = await status(tSub);
      return st.deliveredCount === '6' ? st : undefined;
    },
    BOUND_MS * 4,
  );
  t.is(tDone.pendingCount, '0');

  // Neither silent sink stretches its request past the deadline, however it behaves.
  t.true(silent.requests() > 0 && slowHead.requests() > 0);
  for (const uid of [sSub, hSub]) {
    const st = await until(
      'the silent sink failed at the deadline',
      async () => {
        const x = await status(uid);
        return x.consecutiveFailures >= 1 ? x : undefined;
      },
      DEADLINE_MS * 4,
    );
    t.is(st.lastError, `sink did not answer within ${DEADLINE_MS} ms`);
    t.is(st.deliveredCount, '0');
  }
});
