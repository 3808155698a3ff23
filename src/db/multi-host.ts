import type { Knex } from 'knex';
import pg from 'pg';
import { isReadOnlyTransaction } from './errors.js';

/**
 * A libpq-style multi-host URL: `postgres://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write`.
 * node-postgres takes one host only; Arbor tries the hosts in order itself, the way libpq
 * does, so that after a failover new connections find the promoted server.
 */
export interface MultiHostUrl {
  /** One single-host URL per host, in the order given, each with the same credentials. */
  readonly hostUrls: readonly string[];
  /** `host:port` of each, for messages (never the credentials). */
  readonly labels: readonly string[];
  /** `read-write`: keep only a server that takes writes (not a standby, not read-only). */
  readonly readWrite: boolean;
}

const DEFAULT_PORT = '5432';
const PER_HOST_CONNECT_MS = 2_000;

/**
 * Parse `url` when it names more than one host or asks for `target_session_attrs`;
 * `undefined` for an ordinary one-host URL (the driver's own parsing serves it).
 * @throws Error on a `target_session_attrs` other than `any` and `read-write`.
 */
export function parseMultiHostUrl(url: string): MultiHostUrl | undefined {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/.exec(url);
  if (!m) return undefined;
  const [, scheme, userinfo, hostList = '', path = '', query = ''] = m;
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs');
  const hosts = hostList.split(',');
  if (hosts.length < 2 && attrs === null) return undefined;
  if (attrs !== null && attrs !== 'any' && attrs !== 'read-write') {
    throw new Error(`target_session_attrs=${attrs} is not supported (any, read-write)`);
  }
  params.delete('target_session_attrs');
  const rest = params.toString();
  const auth = userinfo === undefined ? '' : `${userinfo}@`;
  const hostUrls: string[] = [];
  const labels: string[] = [];
  for (const h of hosts) {
    // `[::1]:5433`, `host:5433` or `host`.
    const hp = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(h);
    if (!hp || hp[1] === '') throw new Error('DATABASE_URL has an empty host in its host list');
    const port = hp[2] === undefined || hp[2] === '' ? DEFAULT_PORT : hp[2];
    labels.push(`${hp[1]}:${port}`);
    hostUrls.push(`${scheme}${auth}${hp[1]}:${port}${path}${rest === '' ? '' : `?${rest}`}`);
  }
  return { hostUrls, labels, readWrite: attrs === 'read-write' };
}

/** What Knex's pg dialect marks on a connection it must not hand out again. */
interface KnexPgConnection extends pg.Client {
  __knex__disposed?: unknown;
}

interface KnexPgClient {
  connectionSettings: pg.ClientConfig;
  _acquireOnlyConnection(): Promise<KnexPgConnection>;
}

/** A server that answers but does not take writes (a standby, or one set read-only). */
function noWritableServer(labels: readonly string[], last: unknown): Error {
  const e = new Error(
    `no read-write server among ${labels.join(', ')}` +
      (last instanceof Error ? ` (last: ${last.message.split('\n', 1)[0]})` : ''),
  );
  // Class 08, connection exception: what libpq reports when no host qualifies.
  (e as { code?: string }).code = '08001';
  return e;
}

/**
 * Make Knex's pg client open each new pooled connection on the first host of `hosts` that
 * accepts it (and, with read-write, is not in recovery nor read-only), starting from the
 * one that last qualified. A connection whose query is refused as read-only (25006: its
 * server was demoted under it) is marked disposed, so the pool drops it instead of
 * handing it out again; dead connections are marked by the dialect itself.
 */
export function connectToFirstQualifying(knex: Knex, hosts: MultiHostUrl): void {
  const client = knex.client as unknown as KnexPgClient;
  let preferred = 0;
  client._acquireOnlyConnection = async () => {
    let last: unknown;
    for (let i = 0; i < hosts.hostUrls.length; i++) {
      const at = (preferred + i) % hosts.hostUrls.length;
      const conn = new pg.Client({
        // A host that is gone without refusing (a dead machine) must not use up the whole
        // acquire timeout before the next host is tried.
        connectionTimeoutMillis: PER_HOST_CONNECT_MS,
        ...client.connectionSettings,
        connectionString: hosts.hostUrls[at],
      }) as KnexPgConnection;
      conn.on('error', (err) => {
        conn.__knex__disposed = err;
      });
      conn.on('end', () => {
        conn.__knex__disposed ??= 'Connection ended unexpectedly';
      });
      try {
        await conn.connect();
        if (hosts.readWrite) {
          const res = await conn.query<{ ro: boolean }>(
            "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' AS ro",
          );
          if (res.rows[0]?.ro !== false) {
            last = new Error(`${hosts.labels[at]} is read-only`);
            await conn.end().catch(() => undefined);
            continue;
          }
        }
        preferred = at;
        disposeOnReadOnly(conn);
        return conn;
      } catch (e) {
        last = e;
        await conn.end().catch(() => undefined);
      }
    }
    // One host: its own error says it best (refused, password, …).
    if (hosts.hostUrls.length === 1 && !(last instanceof Error && /read-only/.test(last.message)))
      throw last;
    throw noWritableServer(hosts.labels, last);
  };
}

type QueryCallback = (err: Error | null, res: unknown) => void;

/** Wrap `conn.query` so that a read-only refusal marks the connection disposed. */
function disposeOnReadOnly(conn: KnexPgConnection): void {
  const query = conn.query.bind(conn) as (...args: unknown[]) => unknown;
  const mark = (err: unknown) => {
    if (isReadOnlyTransaction(err)) conn.__knex__disposed = err;
  };
  (conn as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
    const cb = args[args.length - 1];
    if (typeof cb === 'function') {
      args[args.length - 1] = (err: Error | null, res: unknown) => {
        if (err) mark(err);
        (cb as QueryCallback)(err, res);
      };
      return query(...args);
    }
    const r = query(...args);
    if (r instanceof Promise) r.catch(mark);
    return r;
  };
}
