import test from 'ava';
import fc from 'fast-check';
import { request } from 'node:http';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';
import { buildTenancy, type Tenancy } from '../helpers/tenancy-fixtures.js';

/**
 * The HTTP fuzzer: random methods, path spellings and case, query parameters, headers
 * and bodies (hostile Unicode, NUL, lone surrogates, huge numbers, deep nesting,
 * `__proto__`, 1 MB+ strings) as the admin, a tenant, an unbound identity and anonymous.
 * Every answer must be below 500, every error a google.rpc.Status, and the server alive
 * at the end. A fixed seed in CI; `ARBOR_FUZZ_RUNS` (and `ARBOR_FUZZ_SEED`) for more.
 */
const RUNS = Number(process.env.ARBOR_FUZZ_RUNS ?? 2500);
const SEED = Number(process.env.ARBOR_FUZZ_SEED ?? 0x9a3b);

let s: TestServer;
let t9: Tenancy;
const tokens: Record<string, string | undefined> = {};

test.before(async () => {
  s = await startServer();
  t9 = await buildTenancy(s, 'fz');
  tokens.admin = ADMIN_TOKEN;
  tokens.tenant = await t9.tokenFor(t9.ids['owner@a']!);
  tokens.viewer = await t9.tokenFor(t9.ids['viewer@a']!);
  tokens.unbound = await t9.tokenFor(t9.ids.unbound!);
  tokens.anonymous = undefined;
  tokens.garbage = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.';
});
test.after.always(async () => {
  await s?.close();
});

const COLLECTIONS = [
  '/iam/v2beta1/groups',
  '/iam/v2beta1/identities',
  '/iam/v2beta1/roles',
  '/iam/v2beta1/roleBindings',
  '/iam/v2beta1/identityProviders',
  '/iam/v2beta1/accountAssociations',
  '/iam/v2beta1/groupInvites',
  '/registry/v2beta1/repos',
  '/registry/v2beta1/tags',
  '/vulnerabilities/v2beta1/advisories',
  '/iam/v1/groups',
  '/iam/v1/identities',
  '/iam/v1/roles',
  '/iam/v1/rolebindings',
  '/iam/v1/identityProviders',
  '/iam/v1/account_associations',
  '/iam/v1/group_invites',
  '/registry/v1/repos',
];
const SINGLETONS = [
  '/iam/v2beta1/groupInvites:redeem',
  '/sts/exchange',
  '/.well-known/openid-configuration',
  '/.well-known/jwks.json',
  '/healthz',
  '/readyz',
];

/** Strings an attacker reaches for. */
const HOSTILE = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\u202e\u0644\u0627',
  '\ufeff',
  '\uffff',
  '😀'.repeat(50),
  '../../etc/passwd',
  '%00',
  '%2F',
  '__proto__',
  'constructor',
  "' OR 1=1 --",
  '${jndi:ldap://x}',
  '<script>',
  '\\',
  '*',
  '.*',
  '(a+)+b',
  'a'.repeat(5000),
];

const hugeString = 'A'.repeat(1024 * 1024 + 16);

/** Percent-encode UTF-8 bytes; lone surrogates go out as their (invalid) CESU-8 bytes. */
function pct(str: string): string {
  let out = '';
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i);
    const isHigh = c >= 0xd800 && c <= 0xdbff;
    const next = str.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(str.slice(i, i + 2));
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out +=
        `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`.toUpperCase();
    } else {
      out += encodeURIComponent(str[i]!);
    }
  }
  return out;
}

const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ maxLength: 20 }),
);

const uidLike = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...Object.values(t9.res)),
    fc.constantFrom(...Object.values(t9.ids)),
    fc.stringMatching(/^[0-9a-f]{40}$/),
    fc.stringMatching(/^[0-9a-f]{40}\/[0-9a-f]{16}$/),
    fc.constantFrom('..', '.', '', '%2e%2e', '%2F', 'a/../b', '%00', '%ZZ', '%', '~'),
    hostileString.map(pct),
  );

/** Change the case of some letters (the router is case-sensitive; authn must not be). */
const recase = (path: string) =>
  fc
    .array(fc.boolean(), { minLength: path.length, maxLength: path.length })
    .map((flips) => [...path].map((ch, i) => (flips[i] ? ch.toUpperCase() : ch)).join(''));

const pathArb = (): fc.Arbitrary<{ path: string; route: string }> =>
  fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...COLLECTIONS) },
        { weight: 1, arbitrary: fc.constantFrom(...SINGLETONS) },
      ),
      fc.option(uidLike(), { nil: undefined, freq: 2 }),
      fc.constantFrom('none', 'none', 'none', 'case', 'double', 'trailing', 'dot', 'encode'),
    )
    .chain(([base, uid, spelling]) => {
      const route = uid === undefined ? base : `${base}/{uid}`;
      const path = uid === undefined ? base : `${base}/${uid}`;
      switch (spelling) {
        case 'case':
          return recase(path).map((p) => ({ path: p, route }));
        case 'double':
          return fc.constant({ path: path.replace(/\//g, '//'), route });
        case 'trailing':
          return fc.constant({ path: `${path}/`, route });
        case 'dot':
          return fc.constant({
            path: path.replace('/v', '/./v').replace('/iam', '/x/../iam'),
            route,
          });
        case 'encode':
          return fc.constant({
            path: `/${path.slice(1).replace(/a/g, '%61').replace(/\//g, '%2F')}`,
            route,
          });
        default:
          return fc.constant({ path, route });
      }
    });

const QUERY_KEYS = [
  'page_size',
  'pageSize',
  'page_token',
  'order_by',
  'skip',
  'uidp.descendants_of',
  'uidp.children_of',
  'name',
  'identity',
  'group',
  'role',
  'digest',
  'id',
  'severity',
  'package',
  'ecosystem',
  'updateMask',
  'update_mask',
  'aud',
  '__proto__',
];
const queryValue = fc.oneof(
  fc.constantFrom(
    '-1',
    '0',
    '1',
    '200',
    '201',
    '99999999999999999999',
    '1e309',
    'NaN',
    'name desc',
    'uid asc, name',
    'created_at',
  ),
  fc.constantFrom(...Object.values({ a: 'x' })),
  hostileString,
);
const queryArb = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), hostileString), queryValue), {
    maxLength: 4,
  })
  .map((pairs) => pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&'));

/** JSON-ish bodies, hostile inside. */
const leaf = fc.oneof(
  hostileString,
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, 1, true, false, null),
  fc.double(),
  fc.integer(),
);
const jsonArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        fc.constantFrom(
          'name',
          'description',
          'claimMatch',
          'staticKeys',
          'issuer',
          'subject',
          'claims',
          'capabilities',
          'identityUid',
          'roleUid',
          'code',
          'oidc',
          'digest',
          'ttl',
          '__proto__',
          'constructor',
          'uid',
        ),
        hostileString,
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** Bodies that are objects with known field names most of the time, so validators run. */
const bodyArb = () =>
  fc.oneof(
    { weight: 6, arbitrary: jsonArb.map((v) => JSON.stringify(v) ?? '') },
    {
      weight: 3,
      arbitrary: fc
        .record(
          {
            name: fc.oneof(fc.constantFrom('ok-name'), hostileString),
            description: hostileString,
            claimMatch: fc.record(
              {
                issuer: hostileString,
                subject: hostileString,
                claims: fc.dictionary(hostileString, hostileString, { maxKeys: 2 }),
              },
              { requiredKeys: [] },
            ),
            capabilities: fc.array(hostileString, { maxLength: 3 }),
            identityUid: uidLike(),
            roleUid: uidLike(),
            digest: hostileString,
            code: hostileString,
            ttl: fc.oneof(hostileString, fc.constantFrom('60s', '-1s', '99999999999999999999s')),
          },
          { requiredKeys: [] },
        )
        .map((o) => JSON.stringify(o)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{"__proto__":{"polluted":true},"name":"p"}',
        '{"constructor":{"prototype":{"x":1}}}',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1000, max: 20000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 100, max: 5000 })
        .map((d) => '{"a":'.repeat(d) + '1' + '}'.repeat(d)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{',
        'null',
        '[]',
        '"x"',
        '1e99999',
        '\u0000',
        '{"name":"\\ud800"}',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(JSON.stringify({ name: 'huge', description: hugeString })),
    },
  );

const requestArb = () =>
  fc.record({
    method: fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE') },
      { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PROPFIND', 'TRACE', 'get') },
    ),
    target: pathArb(),
    query: fc.option(queryArb, { nil: undefined, freq: 2 }),
    who: fc.constantFrom(
      'admin',
      'admin',
      'tenant',
      'tenant',
      'viewer',
      'unbound',
      'anonymous',
      'garbage',
    ),
    contentType: fc.constantFrom(
      'application/json',
      'application/json',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      '',
      'application/json; charset=latin1',
    ),
    body: fc.option(bodyArb(), { nil: undefined, freq: 4 }),
    requestId: fc.option(hostileString.map(pct), { nil: undefined, freq: 4 }),
  });

interface Answer {
  status: number;
  text: string;
}

function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Answer> {
  const u = new URL(s.url);
  return new Promise((resolve, reject) => {
    const r = request(
      { host: u.hostname, port: u.port, method, path, headers, agent: false },
      (m) => {
        const chunks: Buffer[] = [];
        m.on('data', (c: Buffer) => chunks.push(c));
        m.on('end', () =>
          resolve({ status: m.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    r.on('error', reject);
    if (body !== undefined) r.write(body);
    r.end();
  });
}

function isStatusBody(text: string): boolean {
  try {
    const b = JSON.parse(text) as { code?: unknown; message?: unknown; details?: unknown };
    return (
      Number.isInteger(b.code) &&
      typeof b.message === 'string' &&
      Array.isArray(b.details) &&
      (b.details as Array<{ '@type'?: unknown }>).every(
        (d) =>
          typeof d['@type'] === 'string' &&
          d['@type'].startsWith('type.googleapis.com/google.rpc.'),
      )
    );
  } catch {
    return false;
  }
}

test('fuzz: no input makes a 5xx, every error is a google.rpc.Status, the server lives', async (t) => {
  let requests = 0;
  const reached = new Set<string>();
  const statuses = new Map<number, number>();
  let failure = '';
  await fc.assert(
    fc.asyncProperty(requestArb(), async (r) => {
      const headers: Record<string, string> = {};
      const token = tokens[r.who];
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      if (r.contentType) headers['content-type'] = r.contentType;
      if (r.requestId !== undefined) headers['x-request-id'] = r.requestId;
      const path = r.query === undefined ? r.target.path : `${r.target.path}?${r.query}`;
      const method = r.method.toUpperCase() === r.method ? r.method : r.method;
      const withBody = method !== 'GET' && method !== 'HEAD' ? r.body : undefined;
      let a: Answer;
      try {
        a = await send(method, path, headers, withBody);
      } catch (e) {
        // The client refusing to send it (an invalid method or path) is no server fault.
        if (e instanceof TypeError || (e as { code?: string }).code === 'ERR_INVALID_HTTP_TOKEN')
          return;
        failure = `${method} ${path.slice(0, 200)} as ${r.who} (body ${withBody?.length ?? 0} chars: ${(withBody ?? '').slice(0, 100)}): ${String(e)}`;
        throw e;
      }
      requests++;
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      // Reached: a route's handler (or its authorization) answered, not the router.
      const routerMiss = a.status === 405 || a.text.includes('"Not found: no route for');
      if (a.status < 500 && a.status !== 401 && !routerMiss)
        reached.add(`${method} ${r.target.route}`);
      const shown = `${method} ${path.slice(0, 200)} as ${r.who}, body ${(withBody ?? '').slice(0, 200)}`;
      if (a.status >= 500) {
        failure = `${shown} → ${a.status} ${a.text.slice(0, 300)}`;
        throw new Error(failure);
      }
      if (a.status >= 400 && method !== 'HEAD' && !isStatusBody(a.text)) {
        failure = `${shown} → ${a.status}, not a google.rpc.Status: ${a.text.slice(0, 200)}`;
        throw new Error(failure);
      }
    }),
    {
      numRuns: RUNS,
      seed: SEED,
      endOnFailure: true,
      // The default report prints the whole counterexample (bodies of a megabyte).
      reporter: (out) => {
        if (out.failed) {
          throw new Error(
            `fuzz failed (seed ${out.seed}, path ${out.counterexamplePath}): ${failure || String(out.errorInstance)}`,
          );
        }
      },
    },
  );
  const alive = await send('GET', '/healthz', {}, undefined);
  t.is(alive.status, 200);
  const ready = await send('GET', '/readyz', {}, undefined);
  t.is(ready.status, 200);
  const summary = `fuzz: ${requests} requests, ${reached.size} distinct routes reached (method × route template answered by a handler); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((x, y) => x[0] - y[0])))}`;
  t.log(summary);
  process.stdout.write(`${summary}\n`);
  t.true(requests >= RUNS * 0.9);
});

test('fuzz: an oversized request head is a typed 431, and the server lives', async (t) => {
  const res = await send(
    'GET',
    `/iam/v2beta1/groups?name=${'a'.repeat(64 * 1024)}`,
    { authorization: `Bearer ${ADMIN_TOKEN}` },
    undefined,
  );
  t.is(res.status, 431);
  t.true(isStatusBody(res.text), res.text);
  t.is((await send('GET', '/healthz', {}, undefined)).status, 200);
});
