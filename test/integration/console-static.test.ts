import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { consoleCsp } from '../../src/api/console-static.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * The console's static door: the built files and nothing else, GET/HEAD only, every answer
 * under the console's security headers. Requests go out raw (node:http), since fetch would
 * normalise the `..` and `//` that these tests must put on the wire.
 */
const SECRET = 'top-secret-outside-the-console';
let root: string;
let s: TestServer;
let bare: TestServer;

test.before(async () => {
  root = mkdtempSync(join(tmpdir(), 'arbor-console-static-'));
  const dir = join(root, 'console');
  mkdirSync(join(dir, 'img'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(dir, 'app.js'), 'export {};');
  writeFileSync(join(dir, 'img', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dir, 'app.js.map'), '{}');
  // Beside the console, where a traversal would land.
  writeFileSync(join(root, 'secret.txt'), SECRET);
  s = await startServer({
    ARBOR_CONSOLE_DIR: dir,
    ARBOR_LOGIN_ISSUER: 'https://login.example.com/tenant/v2',
    ARBOR_LOGIN_CLIENT_ID: 'arbor-console',
  });
  bare = await startServer({ ARBOR_CONSOLE_DIR: join(root, 'not-built') });
});

test.after.always(async () => {
  await s?.close();
  await bare?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function raw(base: string, method: string, path: string): Promise<Raw> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self' https://login.example.com; frame-ancestors 'none'; base-uri 'none'; " +
  "form-action 'self'";

test('console: index.html and its files, with the CSP naming the login origin', async (t) => {
  t.is(consoleCsp('https://login.example.com/tenant/v2'), CSP);
  for (const path of ['/console/', '/console/callback']) {
    const r = await raw(s.url, 'GET', path);
    t.is(r.status, 200, path);
    t.is(r.body, '<!doctype html><title>console</title>');
    t.is(r.headers['content-type'], 'text/html; charset=utf-8');
    t.is(r.headers['content-security-policy'], CSP);
    t.is(r.headers['x-content-type-options'], 'nosniff');
    t.is(r.headers['referrer-policy'], 'no-referrer');
    t.is(r.headers['set-cookie'], undefined);
  }
  const js = await raw(s.url, 'GET', '/console/app.js');
  t.is(js.status, 200);
  t.is(js.headers['content-type'], 'text/javascript; charset=utf-8');
  t.is((await raw(s.url, 'GET', '/console/img/logo.svg')).status, 200);
  // Source maps are not among the kinds of file served.
  t.is((await raw(s.url, 'GET', '/console/app.js.map')).status, 404);
});

test('console: / and /console redirect to /console/', async (t) => {
  for (const path of ['/', '/console']) {
    const r = await raw(s.url, 'GET', path);
    t.is(r.status, 302, path);
    t.is(r.headers.location, '/console/');
    t.is(r.headers['content-security-policy'], CSP);
  }
});

test('console: no spelling of a path reaches a file outside the build', async (t) => {
  const attempts = [
    '/console/../secret.txt',
    '/console/..%2fsecret.txt',
    '/console/%2e%2e/secret.txt',
    '/console/%2e%2e%2fsecret.txt',
    '/console/%2E%2E%2Fsecret.txt',
    '/console/img/../../secret.txt',
    '/console/..\\secret.txt',
    '/console/..%5csecret.txt',
    `/console/${encodeURIComponent(join(root, 'secret.txt'))}`,
    `/console/${join(root, 'secret.txt')}`,
    `/console//${join(root, 'secret.txt')}`,
    '/console/app.js%00',
    '/console/app.js%00.html',
    '/console/index.html%00/../../secret.txt',
    '/console/%00',
    '/console/./app.js',
    '/console/APP.JS',
  ];
  for (const path of attempts) {
    const r = await raw(s.url, 'GET', path);
    t.true(r.status === 404 || r.status === 400, `${path}: ${r.status}`);
    t.false(r.body.includes(SECRET), path);
  }
});

test('console: GET and HEAD only; anything else is 405 with Allow', async (t) => {
  const head = await raw(s.url, 'HEAD', '/console/');
  t.is(head.status, 200);
  t.is(head.body, '');
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    const r = await raw(s.url, method, '/console/app.js');
    t.is(r.status, 405, method);
    t.is(r.headers.allow, 'GET, HEAD');
    t.is(JSON.parse(r.body).code, 12);
  }
});

test('console: revalidation by ETag answers 304', async (t) => {
  const first = await fetch(`${s.url}/console/app.js`);
  const etag = first.headers.get('etag');
  t.truthy(etag);
  t.is(first.headers.get('cache-control'), 'no-cache');
  const again = await fetch(`${s.url}/console/app.js`, { headers: { 'if-none-match': etag! } });
  t.is(again.status, 304);
});

test('console: not built, /console/ says so and / stays the API 404', async (t) => {
  const r = await raw(bare.url, 'GET', '/console/');
  t.is(r.status, 404);
  t.regex(r.body, /npm run build/);
  t.regex(String(r.headers['content-security-policy']), /^default-src 'none'/);
  const slash = await raw(bare.url, 'GET', '/');
  t.is(slash.status, 404);
  t.is(JSON.parse(slash.body).code, 5);
});

test('console: neighbours of /console are not the console', async (t) => {
  const r = await raw(s.url, 'GET', '/consolex');
  t.is(r.status, 404);
  t.is(r.headers['content-security-policy'], undefined);
  t.is(JSON.parse(r.body).code, 5);
});
