import { RequestScope } from '../core/request-scope.js';
import knexFactory, { type Knex } from 'knex';
import { isRpcError } from '../core/rpc-error.js';
import { decodeToken, encodeToken, parseLsn } from './consistency-token.js';
import { useUnnamedStatements, type PoolerMode } from './pooler-mode.js';

/**
 * Read replicas (`DATABASE_READ_URL`) and the rules that decide when one may answer a read
 * (docs/operations.md, "Read replicas"; docs/adr/0011).
 *
 * A read may go to a replica only when the replica has replayed the write-ahead log at least
 * to a required position, checked on the very connection the read's statement runs on (a
 * replica URL may be a load-balanced service in front of several servers, so a probe of
 * "the replica" would say nothing about the next connection):
 * - with a consistency token: at least the token's position (the client's own write), and
 * - always: at least the position the primary had reached `maxLagMs` ago, as sampled by a
 *   probe every `probeMs`. So a read without a token sees every write acknowledged more
 *   than `maxLagMs` ago, a measured bound, never an assumed one. Without a recent sample
 *   (the primary not answering the probe) no replica qualifies.
 *
 * A connection remembers the position it was last seen at: replay only moves forward on
 * one server, so a remembered position at or past the requirement needs no new query. When
 * a connection is behind, or a replica fails in any way, the whole read runs again on the
 * primary: reads are idempotent, and the primary's answer is the authoritative one.
 */
export interface ReadReplicasOptions {
  /** Staleness accepted by reads without a token (default 1000 ms). */
  maxLagMs?: number | undefined;
  /** How often the primary's WAL position is sampled (default: a fifth of maxLagMs, 10..250 ms). */
  probeMs?: number | undefined;
  poolMax?: number | undefined;
  warn?: ((message: string) => void) | undefined;
  now?: () => number;
  /** DATABASE_POOLER: replicas behind a transaction-mode pooler run statements unnamed too. */
  pooler?: PoolerMode | undefined;
}

/** Where reads were served, for tests, the benchmark and metrics. */
export interface ReplicaStats {
  /** Reads answered by a replica. */
  replica: number;
  /** Reads answered by the primary: no replica qualified, or one was behind or failed. */
  primary: number;
  /** Of those, reads whose replica was behind their requirement (checked, or just seen so). */
  behind: number;
  /** Of those, reads begun on a replica that failed (down, conflict with recovery, …). */
  failed: number;
}

interface PgClient {
  query(text: string): Promise<{ rows: Array<Record<string, unknown>> }>;
}

interface PoolClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(c: PgClient): Promise<unknown>;
}

/** Thrown inside a replica read whose connection has not replayed far enough. */
class ReplicaBehind extends Error {}

/** The position the read in progress requires of any replica connection it uses. */
const requirement = new RequestScope<bigint>();

/** How long a replica that failed is left alone before a read tries it again. */
const DOWN_MS = 2_000;
/** How long a replica seen behind a read's requirement is not asked again by such reads. */
const BEHIND_MS = 5;

class Replica {
  /** Last replay position seen per connection (a connection stays on one server). */
  readonly seen = new WeakMap<PgClient, bigint>();
  /** The last position any of its connections reported, and when. */
  last: { lsn: bigint; at: number } | undefined;
  /** Failed at a read: skipped until then. */
  downUntil = 0;

  constructor(
    readonly knex: Knex,
    now: () => number,
  ) {
    const client = knex.client as PoolClient;
    const acquire = client.acquireConnection.bind(client);
    // Every statement outside a transaction acquires a connection (Knex's runner and
    // prepared.ts alike): check it there, before the statement is sent.
    client.acquireConnection = async () => {
      const conn = await acquire();
      const need = requirement.get();
      if (need === undefined) return conn;
      try {
        const known = this.seen.get(conn);
        if (known !== undefined && known >= need) return conn;
        const at = await replayPosition(conn);
        if (at !== undefined) {
          this.seen.set(conn, at);
          this.last = { lsn: at, at: now() };
        }
        if (at !== undefined && at >= need) return conn;
      } catch (e) {
        await client.releaseConnection(conn);
        throw e;
      }
      await client.releaseConnection(conn);
      throw new ReplicaBehind();
    };
  }
}

/** A replica's replay position; undefined when the server is not in recovery (promoted). */
async function replayPosition(conn: PgClient): Promise<bigint | undefined> {
  const { rows } = await conn.query('SELECT pg_last_wal_replay_lsn()::text AS lsn');
  const lsn = rows[0]?.lsn;
  return typeof lsn === 'string' ? parseLsn(lsn) : undefined;
}

export class ReadReplicas {
  readonly stats: ReplicaStats = { replica: 0, primary: 0, behind: 0, failed: 0 };
  readonly maxLagMs: number;
  readonly #replicas: Replica[];
  readonly #now: () => number;
  readonly #warn: ((message: string) => void) | undefined;
  /** The primary's position, sampled every probeMs, oldest first (the last maxLagMs of them). */
  readonly #samples: Array<{ at: number; lsn: bigint }> = [];
  readonly #timer: NodeJS.Timeout;
  #next = 0;
  #probing = false;
  #closed: Promise<void> | undefined;

  constructor(
    private readonly primary: Knex,
    urls: readonly string[],
    o: ReadReplicasOptions = {},
  ) {
    this.maxLagMs = o.maxLagMs ?? 1_000;
    this.#now = o.now ?? Date.now;
    this.#warn = o.warn;
    this.#replicas = urls.map(
      (url) =>
        new Replica(
          knexFactory({
            client: 'pg',
            connection: { connectionString: url, application_name: 'arbor-read' },
            // A replica that cannot be reached soon is not worth waiting for: the primary is.
            pool: { min: 0, max: o.poolMax ?? 10, acquireTimeoutMillis: 1_000 },
            acquireConnectionTimeout: 1_000,
          }),
          this.#now,
        ),
    );
    if (o.pooler === 'transaction') for (const r of this.#replicas) useUnnamedStatements(r.knex);
    const probeMs = o.probeMs ?? Math.min(250, Math.max(10, Math.floor(this.maxLagMs / 5)));
    this.#timer = setInterval(() => void this.probe(), probeMs);
    this.#timer.unref();
    void this.probe();
  }

  /** How many replicas are configured. */
  get size(): number {
    return this.#replicas.length;
  }

  /** Sample the primary's WAL position (one statement; skipped while one is in flight). */
  async probe(): Promise<void> {
    if (this.#probing || this.#closed) return;
    this.#probing = true;
    // Taken before the query is sent: every write acknowledged before `at` is at or below it.
    const at = this.#now();
    try {
      const lsn = await currentPosition(this.primary);
      this.#samples.push({ at, lsn });
      const horizon = this.#now() - this.maxLagMs;
      // Keep the newest sample older than the horizon too: it is the requirement until the
      // next one ages past it.
      while (this.#samples.length > 1 && this.#samples[1]!.at <= horizon) this.#samples.shift();
    } catch (e) {
      this.#warn?.(`read replicas: sampling the primary's WAL position failed: ${messageOf(e)}`);
    } finally {
      this.#probing = false;
    }
  }

  /**
   * The position a replica must have replayed for a read now: the oldest sample taken within
   * the last maxLagMs (and at least `token`); undefined when there is none (read the primary).
   */
  requirement(token: bigint | undefined): bigint | undefined {
    const horizon = this.#now() - this.maxLagMs;
    const fresh = this.#samples.find((s) => s.at >= horizon);
    if (fresh === undefined) return undefined;
    return token !== undefined && token > fresh.lsn ? token : fresh.lsn;
  }

  /**
   * Run `fn` on a replica that satisfies the requirement of `requested` (the client's token,
   * verbatim), else on the primary. A malformed token reads the primary.
   */
  async read<T>(requested: string | undefined, fn: (k: Knex) => Promise<T>): Promise<T> {
    const token = decodeToken(requested);
    const need =
      requested !== undefined && token === undefined ? undefined : this.requirement(token);
    if (need === undefined) return this.onPrimary(fn);
    const now = this.#now();
    const replica = this.pick(now);
    if (replica === undefined) return this.onPrimary(fn);
    // Seen behind this requirement a moment ago: asking again would cost a query for nothing.
    if (replica.last && replica.last.lsn < need && now - replica.last.at < BEHIND_MS) {
      this.stats.behind++;
      return this.onPrimary(fn);
    }
    try {
      // Awaited inside the scope: `fn` may hand back a query builder, which only runs (and
      // acquires its connection) when awaited.
      const out = await requirement.run(need, async () => await fn(replica.knex));
      this.stats.replica++;
      return out;
    } catch (e) {
      // A domain error (a bad page token, …) is the read's answer wherever it runs.
      if (isRpcError(e)) throw e;
      if (e instanceof ReplicaBehind) this.stats.behind++;
      else {
        this.stats.failed++;
        replica.downUntil = this.#now() + DOWN_MS;
        this.#warn?.(`read replica failed, reading the primary: ${messageOf(e)}`);
      }
      return this.onPrimary(fn);
    }
  }

  /** The next replica in turn that is not resting after a failure. */
  private pick(now: number): Replica | undefined {
    for (let i = 0; i < this.#replicas.length; i++) {
      const r = this.#replicas[this.#next++ % this.#replicas.length]!;
      if (r.downUntil <= now) return r;
    }
    return undefined;
  }

  private async onPrimary<T>(fn: (k: Knex) => Promise<T>): Promise<T> {
    const out = await fn(this.primary);
    this.stats.primary++;
    return out;
  }

  close(): Promise<void> {
    clearInterval(this.#timer);
    return (this.#closed ??= Promise.all(this.#replicas.map((r) => r.knex.destroy())).then(
      () => undefined,
    ));
  }
}

/** The consistency token of the transaction that just committed through `primary`. */
export async function primaryToken(primary: Knex): Promise<string> {
  return encodeToken(await currentPosition(primary));
}

/**
 * The primary's WAL position, at or past the end of every commit acknowledged before the
 * query. A commit returns once its WAL is flushed, so the write position (which is at or
 * past the flush position) is enough, and equals a caught-up replica's replay position. With
 * `synchronous_commit = off` a commit returns before its WAL is written: then the insert
 * position, which can run a page header ahead of any replica while the server is idle (a
 * read then goes to the primary, never to a stale replica).
 */
async function currentPosition(k: Knex): Promise<bigint> {
  const res = (await k.raw(
    `SELECT (CASE WHEN current_setting('synchronous_commit') = 'off'
                  THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_lsn() END)::text AS lsn`,
  )) as { rows: Array<{ lsn: string }> };
  return parseLsn(res.rows[0]!.lsn);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message.split('\n', 1)[0]! : String(e);
}
