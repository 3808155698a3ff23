import type { AddressInfo } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import http2 from 'node:http2';
import test from 'ava';
import { HealthCheckRequestSchema } from '../../src/gen/grpc/health/v1/health_pb.js';
import { toBinary, create } from '@bufbuild/protobuf';
import { answerClientErrors } from '../../src/api/client-errors.js';
import type { NodeHandlerFn } from '../../src/grpc/grpc-handler.js';
import { ArborListener, type ListenerOptions } from '../../src/grpc/listener.js';
import { connectH2, grpcFrame, h2Request, within, type H2Answer } from '../helpers/h2-client.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { selfSigned } from '../helpers/self-signed.js';
import { ADMIN_TOKEN } from '../helpers/server.js';

/**
 * HTTP/2 and slow-peer abuse, from an attacker's side, against 127.0.0.1 only: streams,
 * bodies before authentication, frames that lie about their length, a session's byte
 * budget, idle sessions and half-sent streams, health Watch floods, slow request heads
 * (cleartext and TLS). Each attack is bounded in count and time, and each test proves the
 * limit holds (a count, a closure, a code), never only that the server survived.
 */

const LIST_GROUPS = '/arbor.iam.v2beta1.GroupsService/ListGroups';
const WATCH = '/grpc.health.v1.Health/Watch';
const MiB = 1024 * 1024;
/** A bound on any one wait: only a limit that does not hold should reach it. */
const BOUND_MS = 15_000;

let s: GrpcTestServer;
let readyCalls = 0;

test.before(async () => {
  s = await startGrpcServer({
    ARBOR_HTTP2_SESSION_MAX_BYTES: String(4 * MiB),
    ARBOR_GRPC_HEALTH_WATCH_MAX: '20',
  });
  // Counts the database pings of readiness (the real service, only counted).
  const health = s.arbor.services.health;
  const ready = health.ready.bind(health);
  health.ready = () => {
    readyCalls++;
    return ready();
  };
});
test.after.always(async () => {
  await s?.close();
});

function grpcHeaders(path: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...extra,
  };
}

/** A listener with a trivial handler (no database): for the transport's own limits. */
async function bareListener(
  opts: ListenerOptions,
  handler: NodeHandlerFn = ((_req: unknown, res: { end(s: string): void }) =>
    res.end('ok')) as unknown as NodeHandlerFn,
): Promise<{ listener: ArborListener; port: number; close(): Promise<void> }> {
  const listener = new ArborListener(handler, opts).listen(0, '127.0.0.1');
  await new Promise<void>((r) => listener.once('listening', () => r()));
  return {
    listener,
    port: (listener.address() as AddressInfo).port,
    close: async () => {
      listener.closeAllConnections();
      await new Promise<void>((r) => listener.close(() => r()));
    },
  };
}

test('streams: a session is offered at most 100 concurrent streams (and what is configured)', async (t) => {
  const c = await connectH2(s.url);
  t.is(c.remoteSettings.maxConcurrentStreams, 100);
  c.close();
  const bare = await bareListener({ limits: { maxConcurrentStreams: 7 } });
  const d = await connectH2(`http://127.0.0.1:${bare.port}`);
  t.is(d.remoteSettings.maxConcurrentStreams, 7);
  d.close();
  await bare.close();
});

test('bodies: an anonymous call is refused from its headers, before its body is sent, on both gRPC paths', async (t) => {
  const c = await connectH2(s.url);
  // Each declares 1 MiB and sends 64 KiB of it, then stops: only a refusal made from the
  // headers can answer it.
  const part = grpcFrame(Buffer.alloc(64 * 1024), MiB);
  const calls: Array<[string, Record<string, string>]> = [
    ['fast path', grpcHeaders(LIST_GROUPS)],
    ['Connect, gRPC with a deadline', grpcHeaders(LIST_GROUPS, { 'grpc-timeout': '10S' })],
    ['Connect, gRPC-Web', grpcHeaders(LIST_GROUPS, { 'content-type': 'application/grpc-web' })],
    [
      'Connect protocol',
      {
        ':method': 'POST',
        ':path': LIST_GROUPS,
        'content-type': 'application/proto',
        'content-length': String(MiB),
      },
    ],
  ];
  for (const [name, headers] of calls) {
    const a = await within(h2Request(c, headers, part, { end: false }), BOUND_MS, undefined);
    t.truthy(a, `${name}: no answer while the body was unfinished`);
    if (name === 'Connect protocol') t.is(a?.status, 401, name);
    else t.is(grpcStatusOf(a), 16, `${name}: ${JSON.stringify(a?.headers)}`);
  }
  c.close();
});

// Serial: it reads the fast path's count of calls, which other tests move.
test.serial('frames: a frame takes no more than it declares, on both gRPC paths', async (t) => {
  const c = await connectH2(s.url);
  // A 0-byte ListGroups request, then the prefix of a second message claiming 1 MiB, and
  // the stream left open: the call is refused at that prefix, not after a megabyte.
  const lying = Buffer.concat([grpcFrame(new Uint8Array(0)), grpcFrame(Buffer.alloc(1024), MiB)]);
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  for (const [name, extra] of [
    ['fast path', auth],
    ['Connect', { ...auth, 'grpc-timeout': '10S' }],
  ] as const) {
    const before = s.fastPath.served;
    const a = await within(
      h2Request(c, grpcHeaders(LIST_GROUPS, extra), lying, { end: false }),
      BOUND_MS,
      undefined,
    );
    t.is(
      a?.grpcStatus,
      12,
      `${name}: ${JSON.stringify(a?.headers)} ${JSON.stringify(a?.trailers)}`,
    );
    t.is(s.fastPath.served - before, name === 'fast path' ? 1 : 0, name);
  }
  c.close();
});

test('budget: one session holds at most its byte cap of unfinished requests; the rest are refused', async (t) => {
  const c = await connectH2(s.url);
  const rssBefore = process.memoryUsage().rss;
  // 20 authenticated streams, each sending 512 KiB of a 1 MiB message and stopping:
  // 10 MiB against a 4 MiB cap.
  const part = grpcFrame(Buffer.alloc(512 * 1024), MiB);
  const headers = grpcHeaders(LIST_GROUPS, { authorization: `Bearer ${ADMIN_TOKEN}` });
  let refused = 0;
  let enough: () => void = () => undefined;
  const twelve = new Promise<void>((r) => (enough = r));
  for (let i = 0; i < 20; i++)
    void h2Request(c, headers, part, { end: false }).then((a) => {
      if (a.grpcStatus === 8 && ++refused === 12) enough();
    });
  // At most 8 × 512 KiB fit in 4 MiB: at least 12 must be RESOURCE_EXHAUSTED, however
  // slowly the bytes come (the others wait for the rest of their message).
  await within(twelve, BOUND_MS, undefined);
  const rssPeak = process.memoryUsage().rss;
  c.destroy();
  t.true(refused >= 12, `refused ${refused}`);
  t.log(
    `20 × 512 KiB against a 4 MiB cap: ${refused} refused; RSS ${mib(rssBefore)} → ${mib(rssPeak)} MiB`,
  );
});

test('idle: a session with no stream is closed, PINGs or not; a half-sent stream is reset', async (t) => {
  const slow = ((req: NodeJS.ReadableStream & { url: string }, res: { end(s: string): void }) => {
    // Answers a second after the request came whole: the handler's pace, not the peer's.
    if (req.url === '/slow') setTimeout(() => res.end('late'), 1_000);
    // Answers once the whole body is here.
    else req.on('end', () => res.end('ok')).resume();
  }) as unknown as NodeHandlerFn;
  const bare = await bareListener({ limits: { sessionIdleMs: 300, streamIdleMs: 300 } }, slow);
  const url = `http://127.0.0.1:${bare.port}`;
  try {
    const c = await connectH2(url);
    const pings = setInterval(() => {
      if (!c.destroyed && !c.closed) c.ping(() => undefined);
    }, 50);
    c.once('close', () => clearInterval(pings));
    const started = Date.now();
    const closed = await within(
      new Promise<boolean>((r) => c.once('close', () => r(true))),
      BOUND_MS,
      false,
    );
    clearInterval(pings);
    t.true(closed, 'an idle session (only PINGs) stayed open');
    t.true(Date.now() - started >= 250);

    const d = await connectH2(url);
    const half = await within(
      h2Request(d, { ':method': 'POST', ':path': '/upload' }, Buffer.from('x'), { end: false }),
      BOUND_MS,
      undefined,
    );
    t.is(half?.rstCode, http2.constants.NGHTTP2_CANCEL, 'a half-sent stream was left open');
    // A whole request the handler takes its time over is not the peer's idleness.
    const late = await h2Request(d, { ':method': 'GET', ':path': '/slow' });
    t.is(late.status, 200);
    t.is(late.body.toString(), 'late');
    d.close();
  } finally {
    await bare.close();
  }
});

test('watch: Health/Watch streams share one readiness check and are bounded in number', async (t) => {
  const c = await connectH2(s.url);
  const req = grpcFrame(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, {})));
  const before = readyCalls;
  const firsts: Array<Promise<boolean>> = [];
  const streams: http2.ClientHttp2Stream[] = [];
  for (let i = 0; i < 20; i++) {
    const st = c.request(grpcHeaders(WATCH));
    st.on('error', () => undefined);
    streams.push(st);
    firsts.push(new Promise((r) => st.once('data', () => r(true))));
    st.end(req);
  }
  const all = await within(Promise.all(firsts), BOUND_MS, []);
  t.is(all.length, 20, 'every watch got its first status');
  const pings = readyCalls - before;
  // One check for all (a second if the 5 s interval passed while they opened).
  t.true(pings <= 2, `${pings} readiness checks for 20 watches`);
  const extra = await within(h2Request(c, grpcHeaders(WATCH), req), BOUND_MS, undefined);
  t.is(extra?.grpcStatus, 8, 'the 21st watch was not refused');
  for (const st of streams) st.close();
  c.close();
  t.log(`20 watches: ${pings} readiness check(s); the 21st RESOURCE_EXHAUSTED`);
});

test('slow heads: a half-sent HTTP/1.1 head is closed within headersTimeout, cleartext and TLS', async (t) => {
  const pair = selfSigned();
  const limits = { headersTimeoutMs: 300, requestTimeoutMs: 600 };
  const plain = await bareListener({ limits });
  const secure = pair ? await bareListener({ limits, tls: pair }) : undefined;
  try {
    /** A connection with a head that never ends: how long after its start it was closed. */
    const slowHead = (port: number, secured: boolean) =>
      new Promise<number>((resolve) => {
        let at = 0;
        const sock = secured
          ? tls.connect({ host: '127.0.0.1', port, ca: pair!.cert, servername: 'localhost' })
          : net.connect(port, '127.0.0.1');
        sock.once(secured ? 'secureConnect' : 'connect', () => {
          at = Date.now();
          sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
        });
        sock.on('error', () => undefined);
        // Read, so that the server's close is seen.
        sock.resume();
        sock.once('close', () => resolve(at === 0 ? -1 : Date.now() - at));
      });
    for (const [name, port, secured] of [
      ['cleartext', plain.port, false],
      ...(secure ? [['TLS', secure.port, true] as const] : []),
    ] as const) {
      // 50 connections, each with a head that never ends.
      const closed = await within(
        Promise.all(Array.from({ length: 50 }, () => slowHead(port, secured))),
        BOUND_MS,
        undefined,
      );
      t.truthy(closed, `${name}: half-sent heads were held open`);
      if (closed === undefined) continue;
      const sent = closed.filter((ms) => ms >= 0);
      // Given their time, not cut at once (a TLS handshake slower than the timeout is cut
      // by that rule instead, so not every one).
      t.true(
        sent.filter((ms) => ms >= 250).length >= sent.length / 2,
        `${name}: ${JSON.stringify(sent)}`,
      );
      t.log(
        `${name}: 50 half-sent heads, closed ${Math.min(...sent)}–${Math.max(...sent)} ms after the head began (headersTimeout 300 ms)`,
      );
    }
    // Behind `serve`'s parser-error answers, the late head is a 408 (without a body: which
    // method it was, HEAD or not, never arrived).
    answerClientErrors(plain.listener.http1);
    const answer = await new Promise<string>((resolve) => {
      const sock = net.connect(plain.port, '127.0.0.1', () => sock.write('GET / HTTP/1.1\r\n'));
      const chunks: Buffer[] = [];
      sock.on('data', (c: Buffer) => chunks.push(c));
      sock.on('error', () => undefined);
      sock.on('close', () => resolve(Buffer.concat(chunks).toString()));
    });
    t.regex(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    // The TLS handshake itself is held to it too.
    if (secure) {
      const raw = net.connect(secure.port, '127.0.0.1');
      raw.on('error', () => undefined);
      raw.resume();
      const gone = await within(new Promise((r) => raw.once('close', r)), BOUND_MS, undefined);
      t.not(gone, undefined, 'a connection that never shook hands was held');
    }
  } finally {
    await plain.close();
    await secure?.close();
  }
});

/** The gRPC status, also from a gRPC-Web answer (its trailers are the body's last frame). */
function grpcStatusOf(a: H2Answer | undefined): number | undefined {
  if (a === undefined) return undefined;
  if (a.grpcStatus !== undefined) return a.grpcStatus;
  const m = /grpc-status:\s*(\d+)/i.exec(a.body.toString('latin1'));
  return m ? Number(m[1]) : undefined;
}

function mib(n: number): number {
  return Math.round(n / MiB);
}

test('keep-alive: an idle HTTP/1.1 connection is closed after the configured keepAliveTimeout, by default above a balancer’s 60 s', async (t) => {
  // The default outlives the common load balancers' 60 s idle timeout: the balancer closes
  // first, so it never sends a request onto a socket Arbor is closing.
  const defaults = await bareListener({});
  t.teardown(() => defaults.close());
  t.is(defaults.listener.keepAliveTimeout, 65_000);
  const short = await bareListener({ limits: { keepAliveTimeoutMs: 300 } });
  t.teardown(() => short.close());
  t.is(short.listener.keepAliveTimeout, 300);
  // One request answered, then silence: the server ends the connection.
  const closed = await within(
    new Promise<boolean>((resolve) => {
      const sock = net.connect(short.port, '127.0.0.1', () =>
        sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      );
      sock.on('error', () => undefined);
      sock.resume();
      sock.once('close', () => resolve(true));
    }),
    BOUND_MS,
    false,
  );
  t.true(closed, 'an idle kept-alive connection was held past keepAliveTimeout');
});
