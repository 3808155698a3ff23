import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { parseLsn } from './consistency-token.js';

/** The channel the triggers of migration 0018 announce changes on. */
const CHANNEL = 'arbor_changes';

export interface ChangeFeedOptions {
  /**
   * Single-host URLs of the primary (several: tried in order; a standby refuses LISTEN).
   * A direct connection: LISTEN through a transaction pooler hears nothing.
   */
  urls: readonly string[];
  /** How often the feed proves it is current (default 100 ms). */
  syncMs?: number;
  /** How old the last proof may be while caches still serve (default 500 ms). */
  staleMs?: number;
  warn?: (message: string) => void;
  now?: () => number;
}

/** A change announced by a trigger: `kind` (`g`, `b`) and a key, or undefined for all. */
export type ChangeListener = (kind: string, key: string | undefined) => void;

export interface ChangeFeedStats {
  notifications: number;
  syncs: number;
  connects: number;
  drops: number;
}

/**
 * Hears every committed change to cached rows, in every process, over one direct connection
 * that LISTENs on `arbor_changes` (migration 0018), and says when caches may serve.
 *
 * Why caches can trust it: PostgreSQL keeps one notification queue, appended in the order
 * transactions pre-commit and read by each listener in that order, never past an entry whose
 * transaction is still open. Every `syncMs` the feed asks, on its own connection and in one
 * statement, for the WAL insert position and for a notification on a channel of its own.
 * When that notification arrives, every change committed before the position was read has
 * been heard: the position becomes the feed's horizon, and the moment the statement was
 * sent its `syncedAt`. A cache serves only while
 *  - the connection is up and the last sync was sent less than `staleMs` ago (a dropped or
 *    silent connection stops all serving within that bound, until a fresh connection syncs);
 *  - a sync was sent after this process's last commit (a client reads its own writes);
 *  - the request's consistency token, if any, is at or below the horizon (a client reads
 *    its writes made through any other process).
 */
export class ChangeFeed {
  readonly stats: ChangeFeedStats = { notifications: 0, syncs: 0, connects: 0, drops: 0 };
  readonly #listeners = new Set<ChangeListener>();
  readonly #syncChannel = `arbor_sync_${randomBytes(8).toString('hex')}`;
  readonly #syncMs: number;
  readonly #staleMs: number;
  readonly #now: () => number;
  #client: pg.Client | undefined;
  #closed = false;
  #horizon = -1n;
  #syncedAt = Number.NEGATIVE_INFINITY;
  /** Commits of this process so far, and how many of them the last sync proves heard. */
  #commits = 0;
  #proven = 0;
  #nonce = 0;
  #pending: Sync | undefined;
  #timer: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #backoffMs = 100;

  constructor(private readonly o: ChangeFeedOptions) {
    if (o.urls.length === 0) throw new Error('a change feed needs a database URL');
    this.#syncMs = o.syncMs ?? 100;
    this.#staleMs = o.staleMs ?? 500;
    this.#now = o.now ?? (() => performance.now());
  }

  /** Connect, and keep connecting after every drop until closed. */
  start(): void {
    void this.#connect();
  }

  /** `fn` hears every change; `(kind, undefined)` and `('*', undefined)` mean "all". */
  subscribe(fn: ChangeListener): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Whether a cache may serve now, to a request carrying `token` (an LSN) if any: see the
   * class comment for the three conditions.
   */
  fresh(token?: bigint): boolean {
    if (this.#client === undefined) return false;
    const synced = this.#syncedAt;
    if (this.#proven !== this.#commits || this.#now() - synced >= this.#staleMs) return false;
    return token === undefined || token <= this.#horizon;
  }

  /**
   * This process committed a write: caches pause until a sync sent after it completes (a
   * few milliseconds: one is sent now if none is in flight).
   */
  committed(): void {
    this.#commits++;
    if (this.#pending === undefined) this.#sync();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    clearTimeout(this.#retry);
    const c = this.#client;
    this.#client = undefined;
    this.#down();
    await c?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    let last: unknown;
    for (const url of this.o.urls) {
      const client = new pg.Client({
        connectionString: url,
        application_name: 'arbor-change-feed',
        keepAlive: true,
        connectionTimeoutMillis: 2_000,
      });
      client.on('error', () => this.#lost(client));
      client.on('end', () => this.#lost(client));
      try {
        await client.connect();
        client.on('notification', (n) => this.#heard(client, n.channel, n.payload ?? ''));
        await client.query(`LISTEN ${CHANNEL}`);
        await client.query(`LISTEN ${this.#syncChannel}`);
        // Without migration 0018's triggers nothing is announced: caches must stay off.
        const found = await client.query<{ ok: boolean }>(
          "SELECT to_regproc('arbor_announce') IS NOT NULL AS ok",
        );
        if (found.rows[0]?.ok !== true) throw new Error('the change triggers are not installed');
        if (this.#closed) {
          await client.end().catch(() => undefined);
          return;
        }
        this.#client = client;
        this.#backoffMs = 100;
        this.stats.connects++;
        // Anything remembered before this connection may have missed a change.
        this.#emit('*', undefined);
        this.#timer = setInterval(() => this.#tick(), this.#syncMs);
        this.#timer.unref();
        this.#sync();
        return;
      } catch (e) {
        last = e;
        client.removeAllListeners('end');
        client.on('error', () => undefined);
        await client.end().catch(() => undefined);
      }
    }
    this.o.warn?.(`change feed: cannot listen (${messageOf(last)}); caches stay off until it can`);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => void this.#connect(), this.#backoffMs);
    this.#retry.unref();
    this.#backoffMs = Math.min(this.#backoffMs * 2, 5_000);
  }

  /** The connection failed or ended: stop serving, forget everything, connect again. */
  #lost(client: pg.Client): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    this.stats.drops++;
    this.#down();
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    // A connection that went silent is not ended by the server: end it here.
    void client.end().catch(() => undefined);
    if (!this.#closed) this.o.warn?.('change feed: connection lost; caches off until it is back');
    this.#scheduleReconnect();
  }

  #down(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
    this.#syncedAt = Number.NEGATIVE_INFINITY;
    this.#emit('*', undefined);
  }

  #tick(): void {
    const p = this.#pending;
    // A sync unanswered for twice the staleness bound: the connection is dead, if quietly.
    if (p !== undefined) {
      if (this.#now() - p.sentAt > 2 * this.#staleMs && this.#client) this.#lost(this.#client);
      return;
    }
    this.#sync();
  }

  #sync(): void {
    const client = this.#client;
    if (!client || this.#pending !== undefined) return;
    const nonce = String(++this.#nonce);
    const p: Sync = { nonce, sentAt: this.#now(), commits: this.#commits, heard: false };
    this.#pending = p;
    client
      .query<{ lsn: string }>(
        'SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_notify($1, $2)',
        [this.#syncChannel, nonce],
      )
      .then(
        (res) => {
          if (this.#pending !== p) return;
          p.lsn = parseLsn(res.rows[0]!.lsn);
          this.#settle(p);
        },
        () => this.#lost(client),
      );
  }

  /** A sync counts once both its position and its notification are in. */
  #settle(p: Sync): void {
    if (p.lsn === undefined || !p.heard) return;
    this.#pending = undefined;
    this.#horizon = p.lsn;
    this.#syncedAt = p.sentAt;
    this.#proven = p.commits;
    this.stats.syncs++;
    // A commit came while this sync was in flight: the next one proves it.
    if (this.#proven !== this.#commits) this.#sync();
  }

  #heard(client: pg.Client, channel: string, payload: string): void {
    if (client !== this.#client) return;
    if (channel === this.#syncChannel) {
      const p = this.#pending;
      if (p !== undefined && p.nonce === payload) {
        p.heard = true;
        this.#settle(p);
      }
      return;
    }
    this.stats.notifications++;
    const colon = payload.indexOf(':');
    if (colon < 1) return this.#emit('*', undefined);
    const key = payload.slice(colon + 1);
    this.#emit(payload.slice(0, colon), key === '*' ? undefined : key);
  }

  #emit(kind: string, key: string | undefined): void {
    for (const fn of this.#listeners) fn(kind, key);
  }
}

/** One sync in flight: what it proves once its position and its notification are in. */
interface Sync {
  nonce: string;
  sentAt: number;
  /** This process's commits before it was sent. */
  commits: number;
  lsn?: bigint;
  heard: boolean;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message.split('\n', 1)[0]! : String(e);
}
