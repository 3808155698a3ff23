import test from 'ava';
import fc from 'fast-check';
import { request } from 'node:http';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';
import { requestArb } from '../helpers/fuzz-arbitraries.js';
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

function headersOf(r: {
  who: string;
  contentType: string;
  requestId: string | undefined;
}): Record<string, string> {
  const headers: Record<string, string> = {};
  const token = tokens[r.who];
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (r.contentType) headers['content-type'] = r.contentType;
  if (r.requestId !== undefined) headers['x-request-id'] = r.requestId;
  return headers;
}

/** What is wrong with an answer, if anything: a 5xx, or an error that is no Status. */
function verdict(a: Answer, method: string): string | undefined {
  if (a.status >= 500) return `${a.status} ${a.text.slice(0, 300)}`;
  if (a.status >= 400 && method !== 'HEAD' && !isStatusBody(a.text))
    return `${a.status}, not a google.rpc.Status: ${a.text.slice(0, 200)}`;
  return undefined;
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
    fc.asyncProperty(
      requestArb([...Object.values(t9.res), ...Object.values(t9.ids)]),
      async (r) => {
        const headers = headersOf(r);
        const path = r.query === undefined ? r.target.path : `${r.target.path}?${r.query}`;
        const method = r.method;
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
        const wrong = verdict(a, method);
        if (wrong !== undefined) {
          failure = `${method} ${path.slice(0, 200)} as ${r.who}, body ${(withBody ?? '').slice(0, 200)} → ${wrong}`;
          throw new Error(failure);
        }
      },
    ),
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
