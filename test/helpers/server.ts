import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { pino } from 'pino';
import { answerClientErrors } from '../../src/api/client-errors.js';
import { compose, type Arbor, type ComposeOptions } from '../../src/compose.js';
import { createArborClient, type ArborClient } from '../../src/client/index.js';
import { loadConfig, type Config } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from './db.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestServer {
  url: string;
  arbor: Arbor;
  db: TestDatabase;
  /** A client holding the admin token. */
  admin: Client;
  client(token?: string): Client;
  /** The typed client (src/client, from the OpenAPI document) holding the admin token. */
  api: ArborClient;
  /** The typed client with another token, or none. */
  apiAs(token?: string): ArborClient;
  close(): Promise<void>;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * A loose client: any path, any body, even bytes the API must refuse. Prefer its `api` (or
 * the server's), the typed client, wherever the request is one the document describes.
 */
export interface Client {
  /** The typed client with the same token. */
  api: ArborClient;
  get<T = any>(path: string): Promise<Reply<T>>;
  post<T = any>(path: string, body?: unknown): Promise<Reply<T>>;
  patch<T = any>(path: string, body?: unknown): Promise<Reply<T>>;
  put<T = any>(path: string, body?: unknown): Promise<Reply<T>>;
  delete<T = any>(path: string): Promise<Reply<T>>;
  raw(path: string, init: RequestInit): Promise<Reply>;
}

export function makeClient(base: string, token?: string): Client {
  const raw = async (path: string, init: RequestInit): Promise<Reply> => {
    const headers = new Headers(init.headers);
    if (token !== undefined && !headers.has('authorization'))
      headers.set('authorization', `Bearer ${token}`);
    const res = await fetch(base + path, { ...init, headers });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      /* leave as text */
    }
    return { status: res.status, body, headers: res.headers };
  };
  const withBody = (method: string) => (path: string, body?: unknown) =>
    raw(path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    api: apiClient(base, token),
    get: (path) => raw(path, { method: 'GET' }),
    post: withBody('POST'),
    patch: withBody('PATCH'),
    put: withBody('PUT'),
    delete: (path) => raw(path, { method: 'DELETE' }),
    raw,
  };
}

function apiClient(base: string, token: string | undefined): ArborClient {
  return createArborClient(base, token === undefined ? {} : { token });
}

/** The REST clients of a server at `url`: loose and typed, as the admin or anyone. */
export function restClients(url: string): Pick<TestServer, 'admin' | 'client' | 'api' | 'apiAs'> {
  return {
    admin: makeClient(url, ADMIN_TOKEN),
    client: (token) => makeClient(url, token),
    api: apiClient(url, ADMIN_TOKEN),
    apiAs: (token) => apiClient(url, token),
  };
}

/**
 * The data of a typed call that must succeed; anything else fails the test loudly.
 * @throws Error naming `what`, the status and the google.rpc.Status.
 */
export async function must<T>(
  what: string,
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || data === undefined)
    throw new Error(`${what}: ${response.status} ${JSON.stringify(error)}`);
  return data;
}

/** A real Arbor on an ephemeral loopback port over a fresh database. */
export async function startServer(
  env: Record<string, string> = {},
  opts: Omit<ComposeOptions, 'database'> & { database?: TestDatabase } = {},
): Promise<TestServer> {
  const db = opts.database ?? (await freshDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-test-'));
  const config: Readonly<Config> = loadConfig({
    ARBOR_ADMIN_TOKEN: ADMIN_TOKEN,
    DATA_DIR: dataDir,
    ...env,
  });
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  const arbor = await compose(config, { ...opts, database: db, logger });
  const server: Server = createServer(arbor.rest).listen(0, '127.0.0.1');
  // The tests' fetch shares this event loop. With Node's 5 s default, a loop stalled for
  // seconds on a loaded machine ran the server's idle timer before the client's, in the same
  // turn in which the client had just reused that socket: ECONNRESET ("fetch failed") on a
  // request that never reached the app. A server that idles longer than undici's 4 s client
  // timeout leaves closing idle sockets to the client, which is the side that reuses them.
  server.keepAliveTimeout = 60_000;
  answerClientErrors(server);
  await new Promise<void>((r) => server.once('listening', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    arbor,
    db,
    ...restClients(url),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await arbor.close();
      await db.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
