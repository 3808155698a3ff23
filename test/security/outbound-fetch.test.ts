import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { ISSUER_UNAVAILABLE, RemoteKeySets } from '../../src/auth/remote-key-sets.js';
import { RpcError } from '../../src/core/rpc-error.js';
import { OutboundError, OutboundFetcher } from '../../src/outbound/outbound-fetch.js';
import { CountingServer } from '../helpers/sts.js';

/** The outbound fetcher and the key-set cache on their own, against real loopback sockets. */

async function failure(p: Promise<unknown>): Promise<OutboundError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof OutboundError)) throw new Error(`expected an OutboundError, got ${String(e)}`);
  return e;
}

test('outbound fetch: strict mode refuses http, credentials and non-public addresses before connecting', async (t) => {
  const server = await CountingServer.start(() => ({ status: 200, body: '{}' }));
  const strict = new OutboundFetcher({ allowInsecure: false });
  try {
    t.is((await failure(strict.getJson(server.url))).failure, 'url', 'http');
    t.is((await failure(strict.getJson(`https://u:p@example.com/`))).failure, 'url');
    t.is((await failure(strict.getJson(`https://127.0.0.1:${server.port}/`))).failure, 'address');
    const named = await failure(strict.getJson(`https://localhost:${server.port}/`));
    t.is(named.failure, 'address', named.detail);
    t.regex(named.detail, /resolves to (127\.0\.0\.1|::1) is loopback/);
    t.is(server.connections, 0);
  } finally {
    strict.close();
    await server.stop();
  }
});

test('outbound fetch: answers are bounded in size and time and redirects are not followed', async (t) => {
  let hang = false;
  const server = createServer((req, res) => {
    if (req.url === '/big') res.end(`"${'x'.repeat(2_000)}"`);
    else if (req.url === '/chunked') {
      res.write('[');
      res.end(`${'1,'.repeat(2_000)}1]`);
    } else if (req.url === '/slow') {
      hang = true; // never answers
    } else if (req.url === '/moved') res.writeHead(301, { location: '/ok' }).end();
    else res.end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A generous timeout where an answer is expected (a loaded CI box), a short one for /slow.
  const dev = new OutboundFetcher({ allowInsecure: true, maxBytes: 1_000, timeoutMs: 30_000 });
  const impatient = new OutboundFetcher({ allowInsecure: true, timeoutMs: 300 });
  try {
    t.deepEqual(await dev.getJson(`${base}/ok`), { ok: true });
    t.is((await failure(dev.getJson(`${base}/big`))).failure, 'size');
    t.is((await failure(dev.getJson(`${base}/chunked`))).failure, 'size');
    t.is((await failure(dev.getJson(`${base}/moved`))).failure, 'status');
    t.is((await failure(impatient.getJson(`${base}/slow`))).failure, 'timeout');
    t.true(hang);
  } finally {
    dev.close();
    impatient.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('key sets: every failure is one UNAVAILABLE message, with the detail only in the log', async (t) => {
  const logged: Array<Record<string, unknown>> = [];
  const keys = new RemoteKeySets({
    allowInsecure: false,
    fetcher: {
      getJson: (url) => Promise.reject(new OutboundError('address', `${url}: 10.0.0.1 is private`)),
    },
    log: { warn: (detail) => logged.push(detail) },
  });
  const e = await keys.resolver('https://internal.example').catch((err: unknown) => err);
  t.true(e instanceof RpcError);
  t.is((e as RpcError).message, `Unavailable: ${ISSUER_UNAVAILABLE}`);
  t.like(logged[0], { issuer: 'https://internal.example', failure: 'address' });
  t.regex(String(logged[0]?.detail), /10\.0\.0\.1 is private/);
});

test('key sets: the cache holds at most maxIssuers issuers, however many are asked for', async (t) => {
  let fetches = 0;
  const keys = new RemoteKeySets({
    allowInsecure: false,
    maxIssuers: 10,
    fetcher: {
      getJson: (url) => {
        fetches++;
        return Promise.resolve(
          url.endsWith('/.well-known/openid-configuration')
            ? {
                issuer: url.slice(0, -'/.well-known/openid-configuration'.length),
                jwks_uri: `${url}/keys`,
              }
            : { keys: [] },
        );
      },
    },
  });
  for (let i = 0; i < 200; i++) await keys.resolver(`https://issuer.example/tenants/t${i}`);
  t.is(keys.cachedIssuers, 10);
  t.is(fetches, 400);
  await keys.resolver('https://issuer.example/tenants/t199');
  t.is(fetches, 400, 'a recent issuer is still cached');
  await keys.resolver('https://issuer.example/tenants/t0');
  t.is(fetches, 402, 'an old one was dropped and is fetched again');
});
