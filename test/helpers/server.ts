import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { pino } from 'pino';
import { answerClientErrors } from '../../src/api/client-errors.js';
import { compose, type Arbor, type ComposeOptions } from '../../src/compose.js';
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
  close(): Promise<void>;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Client {
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
    get: (path) => raw(path, { method: 'GET' }),
    post: withBody('POST'),
    patch: withBody('PATCH'),
    put: withBody('PUT'),
    delete: (path) => raw(path, { method: 'DELETE' }),
    raw,
  };
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
  const server: Server = arbor.app.listen(0, '127.0.0.1');
  answerClientErrors(server);
  await new Promise<void>((r) => server.once('listening', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    arbor,
    db,
    admin: makeClient(url, ADMIN_TOKEN),
    client: (token) => makeClient(url, token),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await arbor.close();
      await db.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
