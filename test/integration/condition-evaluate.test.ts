import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity, fields, ISSUER } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * The condition tester, `POST /iam/v2beta1/conditions:evaluate`: an expression checked as
 * at create and evaluated over a described request, reading nothing stored. Any principal
 * may ask; nobody unauthenticated; every input bounded (INVALID_ARGUMENT, typed).
 */
let s: TestServer;
let someone: ReturnType<TestServer['client']>;
const E = '/iam/v2beta1/conditions:evaluate';

test.before(async () => {
  s = await startServer();
  const org = await createGroup(s.admin, 'tester-org');
  // An identity with no role binding anywhere: the tester needs none.
  const id = await createIdentity(s.admin, org, 'nobody');
  someone = s.client((await s.arbor.tokens.sign(id, { iss: ISSUER, sub: 'sub-nobody' })).token);
});
test.after.always(() => s?.close());

test('true and false, with the values read, for an identity bound to nothing', async (t) => {
  const expression =
    'resource.group.path.startsWith("acme/payments") && request.time.getHours("UTC") < 18 && ' +
    'token.claims.repository == "acme/app"';
  const input = {
    time: '2026-03-02T09:30:00Z',
    capability: 'repo.push',
    group: { uid: 'not-a-real-uid', path: 'acme/payments/api' },
    claims: { repository: 'acme/app' },
  };
  const yes = await someone.post(E, { expression, input });
  t.is(yes.status, 200, JSON.stringify(yes.body));
  t.deepEqual(yes.body, {
    result: true,
    reads: ['request.time', 'resource.group.path', 'token.claims.repository'],
    values: {
      'request.time': '2026-03-02T09:30:00.000Z',
      'resource.group.path': 'acme/payments/api',
      'token.claims': { repository: 'acme/app' },
    },
  });
  const late = await someone.post(E, {
    expression,
    input: { ...input, time: '2026-03-02T19:30:00Z' },
  });
  t.is(late.status, 200);
  t.false(late.body.result);
  t.is(late.body.error, undefined);
});

test('a fault is an answer with its stage and position, not a refusal', async (t) => {
  const unknown = await someone.post(E, { expression: 'request.capability == nope' });
  t.is(unknown.status, 200);
  t.deepEqual(unknown.body, {
    result: false,
    reads: [],
    values: {},
    error: { stage: 'check', message: "undeclared reference to 'nope'", position: 22 },
  });
  const syntax = await someone.post(E, { expression: 'request.time <' });
  t.is(syntax.body.error.stage, 'check');
  t.regex(syntax.body.error.message, /^syntax error/);
  t.true(syntax.body.error.position > 0);
  // Checks, but the claim is missing on this input: an evaluation error, a denial.
  const missing = await someone.post(E, {
    expression: 'token.claims.repository == "acme/app"',
    input: { claims: {} },
  });
  t.is(missing.status, 200);
  t.false(missing.body.result);
  t.is(missing.body.error.stage, 'evaluation');
  t.is(typeof missing.body.error.position, 'number');
  t.deepEqual(missing.body.values, { 'token.claims': {} });
});

test('absent parts are empty and the time defaults to now', async (t) => {
  const r = await someone.post(E, {
    expression: 'resource.type == "" && resource.name == "" && request.capability == ""',
  });
  t.is(r.status, 200);
  t.true(r.body.result);
  const now = await someone.post(E, {
    expression: 'request.time > timestamp("2020-01-01T00:00:00Z")',
  });
  t.true(now.body.result);
});

test('attacks: oversized expression, too many or too large claims, bad times, unknown fields', async (t) => {
  const cases: [unknown, string[]][] = [
    [{ expression: 'true || '.repeat(200) + 'true' }, ['expression']],
    [{}, ['expression']],
    [{ expression: 7 }, ['expression']],
    [
      {
        expression: 'true',
        input: { claims: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`c${i}`, i])) },
      },
      ['input.claims'],
    ],
    [{ expression: 'true', input: { claims: { big: 'x'.repeat(3000) } } }, ['input.claims.big']],
    [{ expression: 'true', input: { claims: { ['k'.repeat(200)]: 1 } } }, ['input.claims']],
    [{ expression: 'true', input: { time: '10000-01-01T00:00:00Z' } }, ['input.time']],
    [{ expression: 'true', input: { time: 'yesterday' } }, ['input.time']],
    [{ expression: 'true', input: { capability: 'c'.repeat(129) } }, ['input.capability']],

    [{ expression: 'true', input: { group: { path: 'p'.repeat(1025) } } }, ['input.group.path']],
    [{ expression: 'true', admin: true }, ['admin']],
    [{ expression: 'true', input: { user: 'root' } }, ['input.user']],
  ];
  for (const [body, want] of cases) {
    const r = await someone.post(E, body);
    const label = JSON.stringify(body).slice(0, 80);
    t.is(r.status, 400, label);
    t.is(r.body.code, 3, label);
    t.deepEqual(
      fields(r.body).map((f: string) => f.replace(/\.\d+$/, '')),
      want,
      label,
    );
  }
  // Nested far past any token's claims (sent as text: the client could not stringify it):
  // refused without recursion, so no stack overflow and no 5xx.
  const deep = await someone.raw(E, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"expression":"true","input":{"claims":{"deep":${'['.repeat(60_000)}${']'.repeat(60_000)}}}}`,
  });
  t.is(deep.status, 400, JSON.stringify(deep.body).slice(0, 200));
  t.deepEqual(fields(deep.body), ['input.claims.deep']);
  // A body past the tester's own bound (well under the server's) is refused unread.
  const huge = await someone.post(E, { expression: 'true', pad: 'x'.repeat(200 * 1024) });
  t.is(huge.status, 413);
  t.is(huge.body.code, 3);
});

test('unauthenticated or with a bad token: 401, nothing evaluated', async (t) => {
  for (const c of [s.client(), s.client('not-a-token')]) {
    const r = await c.post(E, { expression: 'true' });
    t.is(r.status, 401);
    t.is(r.body.code, 16);
    t.false(JSON.stringify(r.body).includes('result'));
  }
});
