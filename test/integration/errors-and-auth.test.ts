import test, { type ExecutionContext } from 'ava';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

const G = '/iam/v2beta1/groups';

function isStatus(t: ExecutionContext, body: any, code: number) {
  t.is(body.code, code);
  t.is(typeof body.message, 'string');
  t.true(Array.isArray(body.details));
  t.is(body.details[0]['@type'], 'type.googleapis.com/google.rpc.ErrorInfo');
}

test('auth: every API route needs a bearer token', async (t) => {
  const anon = s.client();
  for (const [method, path] of [
    ['GET', G],
    ['POST', G],
    ['GET', `${G}/${'a'.repeat(40)}`],
    ['GET', '/iam/v1/groups'],
    ['GET', '/iam/v2beta1/no-such-thing'],
    ['DELETE', `${G}/${'a'.repeat(40)}`],
  ] as const) {
    const res = await anon.raw(path, { method });
    t.is(res.status, 401, `${method} ${path}`);
    isStatus(t, res.body, 16);
  }
});

test('auth: a wrong, malformed or non-bearer token is UNAUTHENTICATED', async (t) => {
  for (const header of [
    'Bearer nope-nope-nope-nope',
    'Basic dXNlcjpwYXNz',
    'Bearer',
    'test-admin-token-0123456789abcdef',
  ]) {
    const res = await s.client().raw(G, { method: 'GET', headers: { authorization: header } });
    t.is(res.status, 401, header);
    isStatus(t, res.body, 16);
  }
});

test('auth: without ARBOR_ADMIN_TOKEN no static token is accepted', async (t) => {
  const other = await startServer({ ARBOR_ADMIN_TOKEN: '' });
  try {
    const res = await other
      .client('')
      .raw(G, { method: 'GET', headers: { authorization: 'Bearer undefined' } });
    t.is(res.status, 401);
  } finally {
    await other.close();
  }
});

test('errors: invalid JSON and non-object bodies are INVALID_ARGUMENT naming body', async (t) => {
  for (const body of ['{"name":', '[1,2]', '"text"', '42']) {
    const res = await s.admin.raw(G, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    t.is(res.status, 400, body);
    isStatus(t, res.body, 3);
    t.is(res.body.details[1].fieldViolations[0].field, 'body');
  }
});

test('errors: a non-JSON content type is refused', async (t) => {
  const res = await s.admin.raw(G, {
    method: 'POST',
    body: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(res.status, 400);
  t.regex(res.body.message, /Content-Type: application\/json/);
});

test('errors: an oversized body is refused with 413 and a typed body', async (t) => {
  const big = JSON.stringify({ name: 'big', description: 'x'.repeat(2 * 1024 * 1024) });
  const res = await s.admin.raw(G, {
    method: 'POST',
    body: big,
    headers: { 'content-type': 'application/json' },
  });
  t.is(res.status, 413);
  isStatus(t, res.body, 3);
});

test('errors: unknown routes are NOT_FOUND and wrong methods are 405 UNIMPLEMENTED', async (t) => {
  const missing = await s.admin.get('/iam/v2beta1/widgets');
  t.is(missing.status, 404);
  isStatus(t, missing.body, 5);
  const root = await s.admin.get('/nothing-here');
  t.is(root.status, 404);
  isStatus(t, root.body, 5);
  const wrong = await s.admin.put(G, {});
  t.is(wrong.status, 405);
  isStatus(t, wrong.body, 12);
  t.truthy(wrong.headers.get('allow'));
});

test('errors: every answer carries a request id, echoed when the client sends a sane one', async (t) => {
  const res = await s.admin.raw(G, { method: 'GET', headers: { 'x-request-id': 'abc-123' } });
  t.is(res.headers.get('x-request-id'), 'abc-123');
  const evil = await s.admin.raw(G, { method: 'GET', headers: { 'x-request-id': 'a b\tc' } });
  t.regex(evil.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test('health: liveness and readiness answer without a token', async (t) => {
  t.is((await s.client().get('/healthz')).status, 200);
  const ready = await s.client().get('/readyz');
  t.is(ready.status, 200);
  t.deepEqual(ready.body, { status: 'ok' });
});
