import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastReads } from '../../src/api/fast-reads.js';
import { buildTenancy, type Tenancy } from './tenancy-fixtures.js';
import { decodedBody, rawRequest, type RawAnswer } from './raw-http.js';
import { ADMIN_TOKEN, startServer, type TestServer } from './server.js';

/**
 * One Arbor reached two ways: through its REST handler (the fast path first) at `s.url`,
 * and through Koa alone (`app.callback()`) at `koaUrl`. `shape` is how an answer is
 * compared (default {@link shape}); a test whose bodies differ where they must (tokens)
 * brings its own.
 */
export interface TwoPaths {
  s: TestServer;
  fast: FastReads;
  koaUrl: string;
  shape?: (r: RawAnswer) => unknown;
  /** Stops the Koa listener (and, for a Parity, the server). */
  close(): Promise<void>;
}

/**
 * {@link TwoPaths} with a tenancy and a token per kind of caller: the fast-path parity
 * tests send every request to both paths and compare the answers.
 */
export interface Parity extends TwoPaths {
  ten: Tenancy;
  /** Bearer tokens by caller: admin, viewer@a, owner@b, unbound, anonymous, forged. */
  tokens: Record<string, string | undefined>;
}

export function fastOf(server: TestServer): FastReads {
  const f = server.arbor.fastReads;
  if (!f) throw new Error('the test server has no fast reads');
  return f;
}

/** Koa alone on a port of its own beside `s` (whose own `close` stays the caller's). */
export async function koaBeside(s: TestServer): Promise<TwoPaths> {
  const koa: Server = createServer(s.arbor.app.callback()).listen(0, '127.0.0.1');
  await new Promise<void>((r) => koa.once('listening', () => r()));
  return {
    s,
    fast: fastOf(s),
    koaUrl: `http://127.0.0.1:${(koa.address() as AddressInfo).port}`,
    close: async () => {
      koa.closeAllConnections();
      await new Promise<void>((r) => koa.close(() => r()));
    },
  };
}

export async function startParity(prefix: string): Promise<Parity> {
  const s = await startServer();
  const ten = await buildTenancy(s, prefix);
  const paths = await koaBeside(s);
  const tokens: Record<string, string | undefined> = { admin: ADMIN_TOKEN };
  for (const who of ['viewer@a', 'owner@b'] as const)
    tokens[who] = await ten.tokenFor(ten.ids[who]!);
  tokens.unbound = await ten.tokenFor(ten.ids.unbound!);
  tokens.anonymous = undefined;
  tokens.forged = `${(await ten.tokenFor(ten.ids['owner@b']!)).slice(0, -4)}AAAA`;
  return {
    ...paths,
    ten,
    tokens,
    close: async () => {
      await paths.close();
      await s.close();
    },
  };
}

/**
 * What both paths must agree on in any answer's head: every header name either sends (a
 * compressed answer's framing, length or chunked, may differ, and the date is the
 * clock's), the status, and the values a client reads.
 */
export function headShape(r: RawAnswer) {
  const h = r.headers;
  const framing = new Set(['date', 'content-length', 'transfer-encoding']);
  return {
    headers: Object.keys(h)
      .filter((k) => !framing.has(k))
      .sort(),
    status: r.status,
    contentType: h['content-type'],
    vary: h.vary,
    encoding: h['content-encoding'],
    requestId: h['x-request-id'],
  };
}

/** The answer as a client reads it; page tokens are sealed with a fresh nonce each time. */
export function shape(r: RawAnswer) {
  const text = decodedBody(r);
  let body: unknown = text;
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    if (typeof json.nextPageToken === 'string') json.nextPageToken = '<token>';
    body = json;
  } catch {
    /* compared as text */
  }
  return { ...headShape(r), body, etag: r.headers.etag };
}

/** Sends `path` to both paths; asserts equal answers and whether the fast path took it. */
export async function same(
  p: TwoPaths,
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
  const before = p.fast.stats.served;
  const viaFast = await rawRequest(p.s.url, path, headers, method, body, chunked);
  t.is(
    p.fast.stats.served - before,
    takenFast ? 1 : 0,
    `${method} ${path}: taken by the fast path`,
  );
  const viaKoa = await rawRequest(p.koaUrl, path, headers, method, body, chunked);
  const what = `${method} ${path} ${JSON.stringify(headers)} ${String(body).slice(0, 200)}`;
  const shapeOf = p.shape ?? shape;
  t.deepEqual(shapeOf(viaFast), shapeOf(viaKoa), what);
  return viaFast;
}

/** {@link same} on the paths `paths()` gives when called (a test file's, set up in `before`). */
export function sameFor(
  paths: () => TwoPaths,
): (
  ...a: Parameters<typeof same> extends [TwoPaths, ...infer R] ? R : never
) => Promise<RawAnswer> {
  return (...a) => same(paths(), ...a);
}

/** The caller's Authorization header (none for anonymous). */
export function authOf(p: Parity, who: string): Record<string, string> {
  return p.tokens[who] === undefined ? {} : { authorization: `Bearer ${p.tokens[who]}` };
}
