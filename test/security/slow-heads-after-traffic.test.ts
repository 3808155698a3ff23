import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import test from 'ava';
import { connectH2, h2Request, within } from '../helpers/h2-client.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { selfSigned, type SelfSigned } from '../helpers/self-signed.js';

/**
 * The head and request deadlines of a new connection hold whatever the
 * server served before it. Slow heads on a server that has served nothing prove little: here
 * each server first answers ordinary traffic (HTTP/1.1 closed and kept alive, an HTTP/2
 * session), on the listener `serve` uses, and only then is attacked. 127.0.0.1 only.
 */

const HEADERS_MS = 400;
const REQUEST_MS = 800;
/** A bound on any one wait: only a deadline that does not hold should reach it. */
const BOUND_MS = 15_000;
const SLOW = 50;

const pair: SelfSigned | undefined = selfSigned();
if (!pair) console.log('SKIPPED the TLS half of the slow-heads test: no openssl');

interface Target {
  name: string;
  server: GrpcTestServer;
  secured: boolean;
}

const targets: Target[] = [];

test.before(async () => {
  const env = {
    ARBOR_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    ARBOR_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
  };
  targets.push({ name: 'cleartext', server: await startGrpcServer(env), secured: false });
  if (pair)
    targets.push({ name: 'TLS', server: await startGrpcServer(env, { tls: pair }), secured: true });
});
test.after.always(async () => {
  for (const t of targets) await t.server.close();
});

function portOf(t: Target): number {
  return Number(t.server.address.split(':')[1]);
}

/**
 * A raw connection, cleartext or TLS (trusting the test certificate), once it can send.
 * `halfOpen`: as an attacker would, it ignores the server's FIN and keeps its own side open.
 */
function open(t: Target, halfOpen = false): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const port = portOf(t);
    const s = t.secured
      ? tls.connect({
          host: '127.0.0.1',
          port,
          ca: pair!.cert,
          servername: 'localhost',
          // tls.connect passes it to its TLSSocket; @types/node leaves it out.
          ...({ allowHalfOpen: halfOpen } as tls.ConnectionOptions),
        })
      : net.connect({ port, host: '127.0.0.1', allowHalfOpen: halfOpen });
    s.once('error', reject);
    s.once(t.secured ? 'secureConnect' : 'connect', () => {
      s.off('error', reject);
      s.on('error', () => undefined);
      resolve(s);
    });
  });
}

/** One GET of /healthz over HTTP/1.1: `close` asks for the connection to end with it. */
function get11(t: Target, keepAlive: boolean): Promise<number> {
  const agent = t.secured
    ? new https.Agent({ keepAlive, ca: pair!.cert, servername: 'localhost' })
    : new http.Agent({ keepAlive });
  return new Promise<number>((resolve, reject) => {
    const req = (t.secured ? https : http).get(`${t.server.url}/healthz`, { agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
  }).finally(() => {
    // A kept-alive connection is left open until the attack is over (see below).
    if (!keepAlive) agent.destroy();
    else kept.push(agent);
  });
}

const kept: Array<http.Agent> = [];

/** Ordinary traffic: closed and kept-alive HTTP/1.1, and an HTTP/2 session opened and closed. */
async function serveOrdinaryTraffic(t: Target): Promise<void> {
  const raw = await open(t);
  const answered = await new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.once('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    raw.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
  if (!answered.startsWith('HTTP/1.1 200')) throw new Error(`${t.name}: ${answered}`);
  for (const keepAlive of [false, true, true]) {
    const status = await get11(t, keepAlive);
    if (status !== 200) throw new Error(`${t.name}: HTTP/1.1 answered ${status}`);
  }
  const h2 = await connectH2(t.server.url, t.secured ? pair!.cert : undefined);
  const a = await h2Request(h2, { ':method': 'GET', ':path': '/healthz' });
  if (a.status !== 200) throw new Error(`${t.name}: HTTP/2 answered ${a.status}`);
  await new Promise<void>((r) => h2.close(() => r()));
}

/**
 * A slowloris connection: it sends `bytes`, then one more byte every 100 ms (never ending
 * the head or body), ignores the server's FIN and never closes its side. Resolves with how
 * long after the first bytes the server closed the connection for good (a write then fails),
 * and what the server answered; -1 if it could not connect.
 */
async function stalled(t: Target, bytes: string): Promise<{ ms: number; answer: string }> {
  const s = await open(t, true).catch(() => undefined);
  if (!s) return { ms: -1, answer: '' };
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    const at = Date.now();
    const trickle = setInterval(() => {
      if (!s.destroyed) s.write('a');
    }, 100);
    s.once('close', () => {
      clearInterval(trickle);
      resolve({ ms: Date.now() - at, answer: Buffer.concat(chunks).toString('latin1') });
    });
    s.write(bytes);
  });
}

for (const secured of [false, true]) {
  const name = secured ? 'TLS' : 'cleartext';
  (secured && !pair ? test.skip : test.serial)(
    `${name}: after ordinary traffic, 50 half-sent heads are each closed within headersTimeout`,
    async (t) => {
      const target = targets.find((x) => x.secured === secured)!;
      await serveOrdinaryTraffic(target);
      const closed = await within(
        Promise.all(
          Array.from({ length: SLOW }, () =>
            stalled(target, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a'),
          ),
        ),
        BOUND_MS,
        undefined,
      );
      t.truthy(closed, `${name}: half-sent heads were held open past ${BOUND_MS} ms`);
      if (!closed) return;
      const times = closed.map((c) => c.ms);
      t.true(
        times.every((ms) => ms >= 0),
        `${name}: some could not connect`,
      );
      // Within the deadline plus the check's interval and a margin for a busy machine.
      const late = times.filter((ms) => ms > HEADERS_MS + 2_000);
      t.deepEqual(late, [], `${name}: closed ${JSON.stringify(times)}`);
      // Answered 408 (or closed at once): never served.
      for (const c of closed) t.notRegex(c.answer, /^HTTP\/1\.1 200/);
      t.true(
        closed.filter((c) => c.answer.startsWith('HTTP/1.1 408 ')).length >= SLOW / 2,
        `${name}: ${JSON.stringify(closed.slice(0, 3))}`,
      );
      t.log(
        `${name}: ${SLOW} half-sent heads after ordinary traffic, closed ${Math.min(...times)}–${Math.max(...times)} ms (headersTimeout ${HEADERS_MS} ms)`,
      );
    },
  );

  (secured && !pair ? test.skip : test.serial)(
    `${name}: after ordinary traffic, a request whose body stops is closed within requestTimeout`,
    async (t) => {
      const target = targets.find((x) => x.secured === secured)!;
      await serveOrdinaryTraffic(target);
      const c = await within(
        stalled(
          target,
          'POST /v1/groups HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
        ),
        BOUND_MS,
        undefined,
      );
      t.truthy(c, `${name}: a half-sent body was held open past ${BOUND_MS} ms`);
      if (c) t.true(c.ms <= REQUEST_MS + 2_000, `${name}: closed after ${c.ms} ms`);
    },
  );
}

test.after.always(() => {
  for (const a of kept) a.destroy();
});
