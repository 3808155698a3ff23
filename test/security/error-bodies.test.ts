import test from 'ava';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import {
  RawConnection,
  rawExchange,
  statusBodyProblem,
  type WireAnswer,
} from '../helpers/raw-socket.js';

/**
 * Every error answer carries its google.rpc.Status, whichever layer writes it: Node's HTTP
 * parser (unknown methods, bad request lines, oversized heads, heads that come too slowly),
 * Node's own answers (no Host, an odd Expect, CONNECT), the router and the handlers. An
 * unknown method once got `Content-Length: 0`, and a 20 KB head sent in two writes got a
 * bodiless 431 about nine times in ten, because the parser's refusal was answered with a
 * body only when the bytes at hand began with a method.
 *
 * Raw sockets throughout: no client library sends these bytes, nor in these writes. The
 * fuzz at the end sends `ARBOR_ERROR_FUZZ_REQUESTS` requests (640 by default, so that it
 * runs in seconds; 30,000 to repeat the pass that found the gap) from 16 kept-alive clients,
 * seeded by `ARBOR_ERROR_FUZZ_SEED`.
 */
const FUZZ_REQUESTS = Number(process.env.ARBOR_ERROR_FUZZ_REQUESTS ?? 640);
const FUZZ_SEED = Number(process.env.ARBOR_ERROR_FUZZ_SEED ?? 0x5eed);
const CLIENTS = 16;

let s: GrpcTestServer;
let port: number;
test.before(async () => {
  s = await startGrpcServer();
  port = Number(new URL(s.url).port);
});
test.after.always(async () => {
  await s?.close();
});

function assertStatus(
  t: { is: (a: unknown, b: unknown, m?: string) => void },
  a: WireAnswer,
  status: number,
  what: string,
) {
  t.is(a.status, status, `${what}: ${a.status} ${a.body.slice(0, 200)}`);
  t.is(statusBodyProblem(a), undefined, what);
}

test.serial('unknown methods are answered 400 with a google.rpc.Status', async (t) => {
  for (const method of ['FROB', 'BREW2', 'GET2', 'X-FROB', 'GETS', 'B', 'frob', 'Get']) {
    const a = await rawExchange(port, [
      `${method} /iam/v2beta1/groups HTTP/1.1\r\nHost: x\r\n\r\n`,
    ]);
    assertStatus(t, a, 400, method);
    t.is(JSON.parse(a.body).code, 3, method);
  }
});

test.serial(
  'a 20 KB head split across two writes gets its 431 Status wherever it is split',
  async (t) => {
    const head =
      `GET /iam/v2beta1/groups HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n` +
      `X-Filler: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
    // The request line, inside the method, past the limit, near the end, and every 1 KB.
    const points = [1, 2, 3, 4, 10, 30, 60, 100, 16_300, 16_400, head.length - 2, head.length - 1];
    for (let at = 1024; at < head.length; at += 1024) points.push(at);
    for (const at of points) {
      const a = await rawExchange(port, [head.slice(0, at), head.slice(at)], { gapMs: 10 }).catch(
        (e: unknown) => {
          throw new Error(`split at ${at}: ${String(e)}`);
        },
      );
      assertStatus(t, a, 431, `split at ${at}`);
    }
    // And in three writes.
    const a = await rawExchange(port, [head.slice(0, 5), head.slice(5, 9000), head.slice(9000)], {
      gapMs: 10,
    });
    assertStatus(t, a, 431, 'three writes');
    // A HEAD in one write still gets no body (RFC 9110 §9.3.2).
    const h = await rawExchange(port, [`HEAD${head.slice(3)}`], { head: true });
    t.is(h.status, 431);
    t.is(h.body, '');
  },
);

test.serial('bad request lines and heads are answered 400 with a google.rpc.Status', async (t) => {
  const bad = [
    'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
    'GET / HTTX/1.1\r\nHost: x\r\n\r\n',
    'GET  HTTP/1.1\r\nHost: x\r\n\r\n',
    '/ HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /a b HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n',
    '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03',
    'GET / HTTP/1.1\r\nHost x\r\n\r\n',
    'GET / HTTP/1.1\r\nHost : x\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n',
    'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
    'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  ];
  for (const req of bad) {
    // In one write, and split in the middle.
    const whole = await rawExchange(port, [Buffer.from(req, 'latin1')]);
    assertStatus(t, whole, 400, JSON.stringify(req));
    const mid = req.length >> 1;
    const split = await rawExchange(
      port,
      [Buffer.from(req.slice(0, mid), 'latin1'), Buffer.from(req.slice(mid), 'latin1')],
      { gapMs: 10 },
    );
    assertStatus(t, split, 400, `${JSON.stringify(req)} split`);
  }
});

test.serial("Node's own answers carry a Status too: no Host, an odd Expect, CONNECT", async (t) => {
  const noHost = await rawExchange(port, ['GET /healthz HTTP/1.1\r\n\r\n']);
  assertStatus(t, noHost, 400, 'no Host');
  t.true(noHost.closed);
  // HTTP/1.0 needs no Host.
  t.is((await rawExchange(port, ['GET /healthz HTTP/1.0\r\n\r\n'])).status, 200);
  const expect = await rawExchange(port, [
    'POST /iam/v2beta1/groups HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nContent-Length: 2\r\n\r\n',
  ]);
  assertStatus(t, expect, 417, 'Expect: tea');
  const connect = await rawExchange(port, ['CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n']);
  assertStatus(t, connect, 405, 'CONNECT');
  // 100-continue still works.
  const c = await RawConnection.open(port);
  try {
    const body = '{"displayName":"x"}';
    const a = await c.exchange([
      `POST /iam/v2beta1/groups HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    ]);
    assertStatus(t, a, 401, '100-continue, no token');
  } finally {
    c.close();
  }
});

test.serial('a head that does not arrive in time gets its 408 Status', async (t) => {
  // This server's deadlines, shortened for this test alone (the tests run one at a time).
  const h1 = s.listener.http1;
  const was = { headers: h1.headersTimeout, request: h1.requestTimeout };
  h1.headersTimeout = h1.requestTimeout = 400;
  try {
    const a = await rawExchange(port, ['GET /iam/v2beta1/groups HTTP/1.1\r\nHost: x\r\n'], {
      timeoutMs: 5_000,
    });
    assertStatus(t, a, 408, 'slow head');
  } finally {
    h1.headersTimeout = was.headers;
    h1.requestTimeout = was.request;
  }
});

/** A small seeded generator (mulberry32): the same seed sends the same requests. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface FuzzRequest {
  bytes: Buffer;
  head: boolean;
  kind: string;
}

/** One request of a random kind: ordinary, odd method, bad line, huge head, odd header, … */
function fuzzRequest(rnd: () => number): FuzzRequest {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const str = (n: number, alphabet: string) =>
    Array.from({ length: n }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
  const paths = [
    '/iam/v2beta1/groups',
    '/iam/v2beta1/groups?page_size=2',
    `/iam/v2beta1/groups/${str(40, '0123456789abcdef')}`,
    '/iam/v2beta1/roles',
    '/iam/v2beta1/identities?uidp.children_of=zz',
    '/registry/v2beta1/repos',
    '/healthz',
    '/readyz',
    '/nope',
    '/openapi.json',
    '/sts/exchange',
    `/iam/v2beta1/${str(5, 'abc%/')}`,
  ];
  const auth = pick([
    `Authorization: Bearer ${ADMIN_TOKEN}\r\n`,
    '',
    'Authorization: Bearer x.y.z\r\n',
  ]);
  const kind = pick([
    'ordinary',
    'ordinary',
    'ordinary',
    'method',
    'line',
    'huge',
    'header',
    'host',
    'expect',
    'body',
    'head',
  ]);
  let method = pick(['GET', 'POST', 'PATCH', 'DELETE', 'PUT']);
  let line = `${method} ${pick(paths)} HTTP/1.1`;
  let headers = `Host: x\r\n${auth}`;
  let body = '';
  switch (kind) {
    case 'method':
      method = pick([
        'FROB',
        'BREW2',
        str(1 + Math.floor(rnd() * 8), 'ABCXYZ0123-_!'),
        'get',
        'PROPFIND',
        'M-SEARCH',
      ]);
      line = `${method} ${pick(paths)} HTTP/1.1`;
      break;
    case 'line':
      line = pick([
        `${method} ${pick(paths)}`,
        `${method} ${pick(paths)} HTTP/${str(3, '0123.')}`,
        `${method}  ${pick(paths)}  HTTP/1.1`,
        `${method} ${pick(paths)}${str(3, ' \t\x01\x7f')} HTTP/1.1`,
        `${method} http://x${pick(paths)} HTTP/1.1`,
        str(1 + Math.floor(rnd() * 30), 'GET /\r\x00HTP1.'),
      ]);
      break;
    case 'huge':
      headers += `X-Filler: ${'b'.repeat(16 * 1024 + Math.floor(rnd() * 20_000))}\r\n`;
      break;
    case 'header':
      headers += pick([
        'NoColon\r\n',
        'Bad Name: v\r\n',
        ` folded: v\r\n`,
        `X: ${str(4, 'a\x00\x01\x7f')}\r\n`,
        'Content-Length: 1\r\nContent-Length: 2\r\n',
        'Content-Length: 1\r\nTransfer-Encoding: chunked\r\n',
        'Transfer-Encoding: gzip\r\n',
        `${str(3, 'abc')}: ${str(5, 'xyz')}\r\n`,
      ]);
      break;
    case 'host':
      headers = auth;
      break;
    case 'expect':
      headers += `Expect: ${pick(['tea', '100-continue', 'nothing'])}\r\n`;
      break;
    case 'body':
      method = pick(['POST', 'PATCH', 'PUT']);
      line = `${method} ${pick(paths)} HTTP/1.1`;
      body = pick([
        '{',
        '{"displayName":1}',
        'null',
        '[]',
        '{"a":'.repeat(50),
        str(30, '{}[]":,ab\\'),
      ]);
      headers += `Content-Type: ${pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded'])}\r\n`;
      break;
    case 'head':
      method = 'HEAD';
      line = `HEAD ${pick(paths)} HTTP/1.1`;
      if (rnd() < 0.3) headers += `X-Filler: ${'c'.repeat(20 * 1024)}\r\n`;
      break;
  }
  if (body !== '') headers += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  return {
    bytes: Buffer.from(`${line}\r\n${headers}\r\n${body}`, 'latin1'),
    head: method === 'HEAD',
    kind,
  };
}

/** The request in one to three writes, split at random points (a split head, often). */
function splits(bytes: Buffer, rnd: () => number): Buffer[] {
  const n = rnd() < 0.5 ? 1 : rnd() < 0.7 ? 2 : 3;
  const cuts = Array.from({ length: n - 1 }, () => 1 + Math.floor(rnd() * (bytes.length - 1))).sort(
    (a, b) => a - b,
  );
  const parts: Buffer[] = [];
  let from = 0;
  for (const c of cuts) {
    if (c > from) parts.push(bytes.subarray(from, c));
    from = Math.max(from, c);
  }
  parts.push(bytes.subarray(from));
  return parts;
}

test.serial(
  `fuzz: ${FUZZ_REQUESTS} requests from ${CLIENTS} kept-alive clients, every error a google.rpc.Status`,
  async (t) => {
    const statuses = new Map<number, number>();
    let reused = 0;
    const failures: string[] = [];
    const perClient = Math.ceil(FUZZ_REQUESTS / CLIENTS);
    const client = async (id: number) => {
      const rnd = random(FUZZ_SEED + id);
      let conn: RawConnection | undefined;
      for (let i = 0; i < perClient && failures.length === 0; i++) {
        const r = fuzzRequest(rnd);
        const parts = splits(r.bytes, rnd);
        if (conn?.closed !== false) conn = await RawConnection.open(port);
        else reused++;
        let a: WireAnswer;
        try {
          a = await conn.exchange(parts, { head: r.head, gapMs: 2 });
        } catch (e) {
          failures.push(
            `${r.kind} ${JSON.stringify(r.bytes.toString('latin1').slice(0, 120))}: ${String(e)}`,
          );
          break;
        }
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        const problem =
          a.status >= 500
            ? `${a.status} ${a.body.slice(0, 200)}`
            : a.status >= 400 && !r.head
              ? statusBodyProblem(a)
              : undefined;
        if (problem !== undefined)
          failures.push(
            `${r.kind} in ${parts.length} writes ${JSON.stringify(r.bytes.toString('latin1').slice(0, 120))} → ${a.status}: ${problem}`,
          );
        if (a.closed) {
          conn.close();
          conn = undefined;
        }
      }
      conn?.close();
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
    const summary = `error-body fuzz: ${perClient * CLIENTS} requests (seed ${FUZZ_SEED}), ${reused} on kept-alive connections; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((x, y) => x[0] - y[0])))}`;
    t.log(summary);
    t.deepEqual(failures.slice(0, 5), [], summary);
    t.is(
      [...statuses.values()].reduce((x, y) => x + y, 0),
      perClient * CLIENTS,
    );
    // Enough of each to mean something: kept-alive reuse and errors from every layer.
    t.true(reused > perClient * CLIENTS * 0.2, summary);
    for (const status of [400, 401, 404, 405, 417, 431])
      t.true((statuses.get(status) ?? 0) > 0, `${status}: ${summary}`);
    t.is((await fetch(`${s.url}/readyz`)).status, 200);
  },
);
