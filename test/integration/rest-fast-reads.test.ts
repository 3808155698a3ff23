import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import test from 'ava';
import { PLACES } from '../helpers/tenancy-fixtures.js';
import { decodedBody, rawRequest } from '../helpers/raw-http.js';
import { startServer } from '../helpers/server.js';
import {
  authOf,
  fastOf,
  sameFor,
  shape,
  startParity,
  type Parity,
} from '../helpers/fast-parity.js';

/**
 * The fast reads (src/api/fast-reads.ts) answer every v2 Get and List outside Koa. The same
 * Arbor is served twice here: through its REST handler (fast reads first) and through Koa
 * alone (`app.callback()`). Every request goes to both and must be answered alike, byte
 * for byte (bodies, status, the headers a client reads); the fast path's own counter
 * proves which requests it took. The access check and lists: access-fast-path.test.ts.
 */
let p: Parity;
test.before(async () => {
  p = await startParity('fast');
});
test.after.always(async () => {
  await p?.close();
});

const same = sameFor(() => p);
const auth = (who: string) => authOf(p, who);

test.serial(
  'fast reads: every v2 Get answers as Koa does, for every caller and kind of uid',
  async (t) => {
    const gets = p.fast.routes().filter(([k]) => k === 'get');
    t.true(gets.length >= 9, `v2 Gets registered: ${gets.map(([, c]) => c).join(', ')}`);
    const uids = Object.entries(p.ten.res)
      .filter(([k]) => k.endsWith('@a') || k.endsWith('@sibling'))
      .map(([, uid]) => uid);
    uids.push('0'.repeat(40), `${p.ten.a}/${'f'.repeat(16)}`);
    let ok = 0;
    for (const [, collection] of gets)
      for (const who of Object.keys(p.tokens))
        for (const uid of uids) {
          const r = await same(
            t,
            `${collection}/${uid}`,
            { ...auth(who), 'x-request-id': `rq-${ok}` },
            true,
          );
          if (r.status === 200) ok++;
        }
    // Not only refusals: each kind was read by someone allowed to.
    t.true(ok >= gets.length * 2, `${ok} successful Gets`);
  },
);

test.serial(
  'fast reads: every v2 List answers as Koa does: pages, order, filters, bad input',
  async (t) => {
    const lists = p.fast.routes().filter(([k]) => k === 'list');
    t.true(lists.length >= 9);
    const queries = [
      '',
      '?page_size=1',
      '?pageSize=2&orderBy=name%20desc',
      '?order_by=create_time&skip=1',
      `?uidp.descendants_of=${p.ten.org}`,
      `?uidp.children_of=${p.ten.a}&page_size=1`,
      '?order_by=secret',
      '?page_token=forged',
      '?page_size=-1',
      '?page_size=1&page_size=2',
      '?name=x&name=y',
    ];
    for (const [, collection] of lists)
      for (const who of ['admin', 'viewer@a', 'owner@b', 'unbound', 'anonymous'])
        for (const q of queries) await same(t, `${collection}${q}`, auth(who), true);
  },
);

test.serial(
  'fast reads: a page token from either path carries on alike on the other',
  async (t) => {
    const first = await same(t, '/iam/v2beta1/roles?page_size=2', auth('admin'), true);
    const token = (JSON.parse(decodedBody(first)) as { nextPageToken: string }).nextPageToken;
    t.truthy(token);
    await same(
      t,
      `/iam/v2beta1/roles?page_size=2&page_token=${encodeURIComponent(token)}`,
      auth('admin'),
      true,
    );
    // The token names its query: the fast path refuses it for another one, as Koa does.
    const other = await rawRequest(
      p.s.url,
      `/iam/v2beta1/roles?page_size=2&order_by=name&page_token=${encodeURIComponent(token)}`,
      auth('admin'),
    );
    t.is(other.status, 400);
  },
);

test.serial('fast reads: large answers are compressed as koa-compress chooses', async (t) => {
  const path = '/iam/v2beta1/roles?page_size=200';
  const plain = await rawRequest(p.s.url, path, auth('admin'));
  t.true(plain.body.length > 1024, 'the list is above the compression threshold');
  const hasZstd = typeof (zlib as { zstdCompress?: unknown }).zstdCompress === 'function';
  const cases = [
    'gzip',
    'br',
    'gzip, deflate, br',
    'br;q=0.5, gzip',
    'gzip;q=0, br;q=0',
    '*',
    'identity',
    'deflate',
    'zstd, gzip',
    'GZIP',
    '',
  ];
  const seen = new Set<string | undefined>();
  for (const ae of cases) {
    const r = await same(
      t,
      path,
      { ...auth('admin'), ...(ae === '' ? {} : { 'accept-encoding': ae }) },
      true,
    );
    seen.add(r.headers['content-encoding'] as string | undefined);
  }
  t.deepEqual(
    [...seen].sort(),
    (hasZstd ? ['br', 'gzip', 'zstd', undefined] : ['br', 'gzip', undefined]).sort(),
  );
  // A small answer (a Get) is never compressed.
  const small = await same(
    t,
    `/iam/v2beta1/groups/${p.ten.a}`,
    { ...auth('admin'), 'accept-encoding': 'br' },
    true,
  );
  t.is(small.headers['content-encoding'], undefined);
});

test.serial('fast reads: what is not a plain v2 read is left to Koa', async (t) => {
  const h = auth('admin');
  const a = p.ten.a;
  await same(t, `/iam/v2beta1/groups/${a}/`, h, false);
  await same(t, `/iam/v2beta1/groups/${a.slice(0, 10)}%61${a.slice(11)}`, h, false);
  await same(t, `/iam/v2beta1/groups/${a.toUpperCase()}`, h, false);
  await same(t, '/iam/v2beta1/groups/', h, false);
  await same(t, `/IAM/v2beta1/groups/${a}`, h, false);
  await same(t, `//iam/v2beta1/groups/${a}`, h, false);
  await same(t, `/iam/v1/groups/${a}`, h, false);
  await same(t, '/iam/v1/groups', h, false);
  await same(t, `/iam/v2beta1/groups/${a}`, h, false, 'HEAD');
  await same(t, '/healthz', {}, false);
  await same(t, '/iam/v2beta1/nothing/here', h, false);
  // A request id that is not one plain token is replaced, on both paths.
  const odd = await rawRequest(p.s.url, `/iam/v2beta1/groups/${a}`, {
    ...h,
    'x-request-id': 'a b',
  });
  t.not(odd.headers['x-request-id'], 'a b');
  t.regex(String(odd.headers['x-request-id']), /^[0-9a-f-]{36}$/);
});

test.serial(
  'fast reads: counted in the metrics under the route template, as Koa counts them',
  async (t) => {
    const metric = async () =>
      (await p.s.arbor.metrics.registry.getSingleMetricAsString('arbor_http_requests_total'))
        .split('\n')
        .filter((l) => l.includes('{route="/iam/v2beta1/groups/{*uid}",method="GET",code="200"}'));
    const count = async () => Number((await metric())[0]?.split(' ').pop() ?? 0);
    const before = await count();
    await same(t, `/iam/v2beta1/groups/${p.ten.a}`, auth('admin'), true);
    // One through each path: both under the one series.
    t.is((await count()) - before, 2);
  },
);

test.serial(
  'fast reads: with CORS on, a browser request is left to Koa for its headers',
  async (t) => {
    const cors = await startServer({ ARBOR_CORS_ORIGINS: 'https://app.example.com' });
    try {
      const f = fastOf(cors);
      const before = f.stats.served;
      const r = await rawRequest(cors.url, '/iam/v2beta1/groups', {
        ...auth('admin'),
        origin: 'https://app.example.com',
      });
      t.is(r.status, 200);
      t.is(r.headers['access-control-allow-origin'], 'https://app.example.com');
      t.is(f.stats.served, before);
      // Without an Origin the fast path answers, with Koa's headers (Vary: Origin included,
      // so that no shared cache hands this answer to a browser).
      const koaOnly = createServer(cors.arbor.app.callback()).listen(0, '127.0.0.1');
      await new Promise<void>((r) => koaOnly.once('listening', () => r()));
      try {
        const base = `http://127.0.0.1:${(koaOnly.address() as AddressInfo).port}`;
        for (const path of ['/iam/v2beta1/groups', `/iam/v2beta1/groups/${'0'.repeat(40)}`]) {
          const h = { ...auth('admin'), 'x-request-id': 'cors-parity' };
          const viaFast = await rawRequest(cors.url, path, h);
          const viaKoa = await rawRequest(base, path, h);
          t.deepEqual(shape(viaFast), shape(viaKoa), path);
          t.is(viaFast.headers.vary, 'Accept-Encoding, Origin');
        }
      } finally {
        koaOnly.closeAllConnections();
        await new Promise<void>((r) => koaOnly.close(() => r()));
      }
      t.is(f.stats.served, before + 2);
    } finally {
      await cors.close();
    }
  },
);

test.serial(
  'fast reads: each place of the tenancy is read alike (sanity of the fixture)',
  async (t) => {
    for (const place of PLACES) {
      const r = await rawRequest(
        p.s.url,
        `/iam/v2beta1/groups/${p.ten.res[`group@${place}`]}`,
        auth('admin'),
      );
      t.is(r.status, 200);
    }
  },
);
