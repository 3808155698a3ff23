import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import test from 'ava';
import type { FastReads } from '../../src/api/fast-reads.js';
import { PLACES, buildTenancy, type Tenancy } from '../helpers/tenancy-fixtures.js';
import { decodedBody, rawRequest, type RawAnswer } from '../helpers/raw-http.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * The fast reads (src/api/fast-reads.ts) answer every v2 Get and List outside Koa. The same
 * Arbor is served twice here: through its REST handler (fast reads first) and through Koa
 * alone (`app.callback()`). Every request goes to both and must be answered alike, byte
 * for byte (bodies, status, the headers a client reads); the fast path's own counter
 * proves which requests it took.
 */
let s: TestServer;
let ten: Tenancy;
let fast: FastReads;
let koa: Server;
let koaUrl: string;
const tokens: Record<string, string | undefined> = {};

test.before(async () => {
  s = await startServer();
  ten = await buildTenancy(s, 'fast');
  fast = fastOf(s);
  koa = createServer(s.arbor.app.callback()).listen(0, '127.0.0.1');
  await new Promise<void>((r) => koa.once('listening', () => r()));
  koaUrl = `http://127.0.0.1:${(koa.address() as AddressInfo).port}`;
  tokens.admin = ADMIN_TOKEN;
  for (const who of ['viewer@a', 'owner@b'] as const)
    tokens[who] = await ten.tokenFor(ten.ids[who]!);
  tokens.unbound = await ten.tokenFor(ten.ids.unbound!);
  tokens.anonymous = undefined;
  tokens.forged = `${(await ten.tokenFor(ten.ids['owner@b']!)).slice(0, -4)}AAAA`;
});
test.after.always(async () => {
  koa?.closeAllConnections();
  await new Promise<void>((r) => (koa ? koa.close(() => r()) : r()));
  await s?.close();
});

function fastOf(server: TestServer): FastReads {
  const f = server.arbor.fastReads;
  if (!f) throw new Error('the test server has no fast reads');
  return f;
}

/** The answer as a client reads it; page tokens are sealed with a fresh nonce each time. */
function shape(r: RawAnswer) {
  const text = decodedBody(r);
  let body: unknown = text;
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    if (typeof json.nextPageToken === 'string') json.nextPageToken = '<token>';
    body = json;
  } catch {
    /* compared as text */
  }
  const h = r.headers;
  // Every header either path sends; a compressed answer's framing (length or chunked) may
  // differ, and the date is the clock's.
  const framing = new Set(['date', 'content-length', 'transfer-encoding']);
  return {
    headers: Object.keys(h)
      .filter((k) => !framing.has(k))
      .sort(),
    status: r.status,
    body,
    contentType: h['content-type'],
    etag: h.etag,
    vary: h.vary,
    encoding: h['content-encoding'],
    requestId: h['x-request-id'],
  };
}

/** Sends `path` to both paths; asserts equal answers and whether the fast path took it. */
async function same(
  t: {
    deepEqual(a: unknown, b: unknown, m?: string): void;
    is(a: unknown, b: unknown, m?: string): void;
  },
  path: string,
  headers: Record<string, string>,
  takenFast: boolean,
  method = 'GET',
  body?: string | Buffer,
  chunked = false,
): Promise<RawAnswer> {
  // A fixed request id, so that both answers carry the same one.
  headers = { 'x-request-id': 'parity', ...headers };
  const before = fast.stats.served;
  const viaFast = await rawRequest(s.url, path, headers, method, body, chunked);
  t.is(fast.stats.served - before, takenFast ? 1 : 0, `${method} ${path}: taken by the fast path`);
  const viaKoa = await rawRequest(koaUrl, path, headers, method, body, chunked);
  const what = `${method} ${path} ${JSON.stringify(headers)} ${String(body).slice(0, 200)}`;
  t.deepEqual(shape(viaFast), shape(viaKoa), what);
  return viaFast;
}

const auth = (who: string): Record<string, string> =>
  tokens[who] === undefined ? {} : { authorization: `Bearer ${tokens[who]}` };

test.serial(
  'fast reads: every v2 Get answers as Koa does, for every caller and kind of uid',
  async (t) => {
    const gets = fast.routes().filter(([k]) => k === 'get');
    t.true(gets.length >= 9, `v2 Gets registered: ${gets.map(([, c]) => c).join(', ')}`);
    const uids = Object.entries(ten.res)
      .filter(([k]) => k.endsWith('@a') || k.endsWith('@sibling'))
      .map(([, uid]) => uid);
    uids.push('0'.repeat(40), `${ten.a}/${'f'.repeat(16)}`);
    let ok = 0;
    for (const [, collection] of gets)
      for (const who of Object.keys(tokens))
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
    const lists = fast.routes().filter(([k]) => k === 'list');
    t.true(lists.length >= 9);
    const queries = [
      '',
      '?page_size=1',
      '?pageSize=2&orderBy=name%20desc',
      '?order_by=create_time&skip=1',
      `?uidp.descendants_of=${ten.org}`,
      `?uidp.children_of=${ten.a}&page_size=1`,
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
      s.url,
      `/iam/v2beta1/roles?page_size=2&order_by=name&page_token=${encodeURIComponent(token)}`,
      auth('admin'),
    );
    t.is(other.status, 400);
  },
);

test.serial('fast reads: large answers are compressed as koa-compress chooses', async (t) => {
  const path = '/iam/v2beta1/roles?page_size=200';
  const plain = await rawRequest(s.url, path, auth('admin'));
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
    `/iam/v2beta1/groups/${ten.a}`,
    { ...auth('admin'), 'accept-encoding': 'br' },
    true,
  );
  t.is(small.headers['content-encoding'], undefined);
});

test.serial('fast reads: what is not a plain v2 read is left to Koa', async (t) => {
  const h = auth('admin');
  const a = ten.a;
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
  const odd = await rawRequest(s.url, `/iam/v2beta1/groups/${a}`, { ...h, 'x-request-id': 'a b' });
  t.not(odd.headers['x-request-id'], 'a b');
  t.regex(String(odd.headers['x-request-id']), /^[0-9a-f-]{36}$/);
});

test.serial(
  'fast reads: counted in the metrics under the route template, as Koa counts them',
  async (t) => {
    const metric = async () =>
      (await s.arbor.metrics.registry.getSingleMetricAsString('arbor_http_requests_total'))
        .split('\n')
        .filter((l) => l.includes('{route="/iam/v2beta1/groups/{*uid}",method="GET",code="200"}'));
    const count = async () => Number((await metric())[0]?.split(' ').pop() ?? 0);
    const before = await count();
    await same(t, `/iam/v2beta1/groups/${ten.a}`, auth('admin'), true);
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
    for (const p of PLACES) {
      const r = await rawRequest(
        s.url,
        `/iam/v2beta1/groups/${ten.res[`group@${p}`]}`,
        auth('admin'),
      );
      t.is(r.status, 200);
    }
  },
);

const CHECK = '/iam/v2beta1/access:check';
const BATCH = '/iam/v2beta1/access:batchCheck';
const JSON_TYPE = { 'content-type': 'application/json' };

test.serial(
  'fast reads: the access check (a POST) answers as Koa does, for every caller and question',
  async (t) => {
    t.deepEqual(
      fast
        .routes()
        .filter(([k]) => k === 'call')
        .map(([, p]) => p)
        .sort(),
      [BATCH, CHECK],
    );
    const q = (o: Record<string, unknown>) => JSON.stringify(o);
    const questions = [
      // About yourself (no identityUid), about others, at groups seen and unseen, gone.
      q({ capability: 'groups.list', groupUid: ten.a }),
      q({ capability: 'groups.delete', groupUid: ten.a }),
      q({ identityUid: ten.ids['viewer@a'], capability: 'groups.list', groupUid: ten.a }),
      q({ identityUid: ten.ids['viewer@a'], capability: 'groups.list', groupUid: ten.b }),
      q({ identityUid: ten.ids['owner@b'], capability: 'groups.update', groupUid: ten.b }),
      q({ identityUid: ten.ids['owner@b'], capability: 'groups.list', groupUid: ten.org }),
      q({ identityUid: ten.ids.unbound, capability: 'groups.list', groupUid: ten.org }),
      q({ identityUid: `${ten.a}/${'f'.repeat(16)}`, capability: 'groups.list', groupUid: ten.a }),
      q({ capability: 'groups.list', groupUid: `${ten.a}/${'f'.repeat(16)}` }),
      q({ capability: 'groups.list', groupUid: '0'.repeat(40) }),
      // Bad input: fields, JSON, shapes, an empty body.
      q({ capability: 'nope', groupUid: 'Not A Uid', extra: 1 }),
      q({ groupUid: ten.a }),
      '{"capability": ',
      '[]',
      '"text"',
      'null',
      '',
      '   ',
    ];
    const statuses = new Set<number>();
    for (const who of Object.keys(tokens))
      for (const body of questions) {
        const r = await same(t, CHECK, { ...auth(who), ...JSON_TYPE }, true, 'POST', body);
        statuses.add(r.status);
      }
    // Allowed and denied answers, bad input, unseen things and bad credentials.
    t.deepEqual([...statuses].sort(), [200, 400, 401, 404]);
    // The batch form, within and past its bound.
    const batch = (n: number) =>
      q({ checks: Array(n).fill({ capability: 'groups.list', groupUid: ten.a }) });
    for (const who of ['admin', 'viewer@a', 'unbound', 'anonymous'])
      for (const body of [batch(2), batch(101), q({ checks: [] }), q({})])
        await same(t, BATCH, { ...auth(who), ...JSON_TYPE }, true, 'POST', body);
  },
);

test.serial(
  'fast reads: the check refuses bodies as Koa does: type, size, encoding, framing',
  async (t) => {
    const body = JSON.stringify({ capability: 'groups.list', groupUid: ten.a });
    const h = auth('viewer@a');
    const types = [
      'application/json',
      'application/json; charset=utf-8',
      'application/merge-patch+json',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
    ];
    for (const type of types)
      await same(t, CHECK, { ...h, 'content-type': type }, true, 'POST', body);
    // No Content-Type at all is read as JSON, as Koa reads it.
    await same(t, CHECK, h, true, 'POST', body);
    // Sent in two chunks without a length.
    await same(t, CHECK, { ...h, ...JSON_TYPE }, true, 'POST', body, true);
    // Past the body limit (1 MiB): refused by its declared length, before it is read.
    const big = JSON.stringify({
      capability: 'groups.list',
      groupUid: ten.a,
      pad: 'x'.repeat(1 << 20),
    });
    const r = await same(t, CHECK, { ...h, ...JSON_TYPE }, true, 'POST', big);
    t.is(r.status, 413);
    // A refusal of the credentials comes before the body is looked at.
    for (const who of ['anonymous', 'forged'])
      await same(t, CHECK, { ...auth(who), 'content-type': 'text/plain' }, true, 'POST', '{');
    // Compressed as koa-compress chooses (a batch answer is above the threshold).
    const many = JSON.stringify({
      checks: Array(40).fill({ capability: 'groups.list', groupUid: ten.a }),
    });
    for (const ae of ['gzip', 'br', 'identity'])
      await same(
        t,
        BATCH,
        { ...auth('admin'), ...JSON_TYPE, 'accept-encoding': ae },
        true,
        'POST',
        many,
      );
    // A consistency token goes into the same scope on both paths.
    await same(t, CHECK, { ...h, 'arbor-consistency-token': '0/16B3748' }, true, 'POST', body);
  },
);

test.serial('fast reads: other spellings and methods of the check are left to Koa', async (t) => {
  const body = JSON.stringify({ capability: 'groups.list', groupUid: ten.a });
  const h = { ...auth('admin'), ...JSON_TYPE };
  await same(t, `${CHECK}?x=1`, h, false, 'POST', body);
  await same(t, '/iam/v2beta1/access%3Acheck', h, false, 'POST', body);
  await same(t, `${CHECK}/`, h, false, 'POST', body);
  await same(t, '/IAM/v2beta1/access:check', h, false, 'POST', body);
  await same(t, CHECK, h, false, 'PUT', body);
  await same(t, CHECK, auth('admin'), false);
  await same(t, '/iam/v2beta1/access:testToken', h, false, 'POST', '{}');
  await same(t, '/iam/v2beta1/groups', h, false, 'POST', '{}');
});

test.serial(
  'fast reads: the check is counted under its route template, as Koa counts it',
  async (t) => {
    const metric = async () =>
      (await s.arbor.metrics.registry.getSingleMetricAsString('arbor_http_requests_total'))
        .split('\n')
        .filter((l) =>
          l.includes('{route="/iam/v2beta1/access\\\\:check",method="POST",code="200"}'),
        );
    const count = async () => Number((await metric())[0]?.split(' ').pop() ?? 0);
    const before = await count();
    const body = JSON.stringify({ capability: 'groups.list', groupUid: ten.a });
    await same(t, CHECK, { ...auth('viewer@a'), ...JSON_TYPE }, true, 'POST', body);
    t.is((await count()) - before, 2);
  },
);

test.serial('fast reads: who-can and what-can answer as Koa does', async (t) => {
  const lists = fast
    .routes()
    .filter(([k]) => k === 'list')
    .map(([, p]) => p);
  t.true(lists.includes('/iam/v2beta1/access:whoCan'));
  t.true(lists.includes('/iam/v2beta1/access:whatCan'));
  const who = '/iam/v2beta1/access:whoCan';
  const queries = [
    `?group=${ten.a}&capability=groups.list`,
    `?group=${ten.a}&capability=groups.list&page_size=1&order_by=uid%20desc`,
    `?group=${ten.a}&capability=groups.list&page_size=1&skip=1`,
    `?group=${ten.b}&capability=groups.update`,
    `?group=${ten.org}&capability=groups.list&uidp.children_of=${ten.org}`,
    `?group=${'0'.repeat(40)}&capability=groups.list`,
    `?group=${ten.a}&capability=nope`,
    `?group=${ten.a}`,
    '',
  ];
  for (const caller of ['admin', 'viewer@a', 'owner@b', 'unbound', 'anonymous'])
    for (const q of queries) await same(t, `${who}${q}`, auth(caller), true);
  const what = '/iam/v2beta1/access:whatCan';
  for (const caller of ['admin', 'viewer@a', 'owner@b', 'unbound'])
    for (const q of ['', `?identity=${ten.ids['viewer@a']}`, '?identity=x', '?page_size=1'])
      await same(t, `${what}${q}`, auth(caller), true);
});
