import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGliteDialect, type PGliteConnectionConfig } from '@harryplusplus/knex-pglite';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { copyTemplate } from './pglite-template.js';
import { connectToFirstQualifying, parseMultiHostUrl } from './multi-host.js';
import { useUnnamedStatements, type PoolerMode } from './pooler-mode.js';
import { ChangeFeed } from './change-feed.js';
import { ReadReplicas } from './read-replicas.js';
import { makeTimestamptzParser } from './timestamptz-parser.js';

// int8 (COUNT(*)) stays a string: totalCount is an int64 rendered as a decimal string anyway.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);
// timestamptz read by fixed positions (see timestamptz-parser.ts), pg's own parser otherwise.
const timestamptz = makeTimestamptzParser(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ));
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, timestamptz);
// PGlite reads timestamptz with the same parser: its own reads years 1-99 as 19xx/20xx and
// BC years or infinity as an Invalid Date, so the two databases would disagree on instants.
const PGLITE_OPTIONS = { parsers: { [pg.types.builtins.TIMESTAMPTZ]: timestamptz } };

export type DatabaseKind = 'postgres' | 'pglite';

export interface Database {
  readonly knex: Knex;
  readonly kind: DatabaseKind;
  /**
   * PGlite only: a gzipped tarball of the data directory, consistent (taken between queries,
   * after a checkpoint); what `arbor backup` stores and `arbor restore` loads.
   */
  readonly dumpDataDir?: () => Promise<Blob>;
  /** PostgreSQL with `DATABASE_READ_URL`: where Gets and Lists of requests may go. */
  readonly replicas?: ReadReplicas;
  /** PostgreSQL with the read cache on: what tells every process's caches of changes. */
  readonly changeFeed?: ChangeFeed;
  /** Waits for queries in flight, then closes. Never rejects; safe to call twice. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `postgres://…`; when absent the embedded PGlite is used. */
  url?: string | undefined;
  /** Where PGlite keeps its files; `memory://` for an ephemeral database. */
  dataDir: string;
  poolMax?: number;
  /** Where the driver's own warnings go (pool acquire errors and such); silent by default. */
  warn?: (message: string) => void;
  /**
   * PGlite: the lock this process already holds on `dataDir` (`arbor serve` takes it before
   * binding its port); without one, opening takes it (as `role`) and closing releases it.
   * @see lockDataDir
   */
  lock?: DataDirLock | undefined;
  role?: string | undefined;
  /**
   * PGlite: where a new data directory is copied from instead of running initdb
   * (pglite-template.ts; default this build's templates, when it has one); false: initdb.
   */
  template?: string | false;
  /** DATABASE_POOLER: `transaction` turns off named prepared statements (pooler-mode.ts). */
  pooler?: PoolerMode | undefined;
  /** `DATABASE_READ_URL`: read replicas of `url` (ignored without `url`). */
  readUrls?: readonly string[] | undefined;
  /** Staleness accepted by replica reads without a consistency token (default 1000 ms). */
  maxReplicaLagMs?: number | undefined;
  /**
   * `ARBOR_READ_CACHE` (default true): keep group rows and grants in memory, invalidated by
   * LISTEN/NOTIFY (change-feed.ts). PostgreSQL only, and only with a direct connection.
   */
  readCache?: boolean | undefined;
  /** `DATABASE_LISTEN_URL`: the direct connection LISTEN needs when `url` is a pooler. */
  listenUrl?: string | undefined;
}

/**
 * The change feed of `opts`, unstarted, or undefined when the cache is off or cannot hear:
 * through a transaction pooler (without `listenUrl`) LISTEN hears nothing.
 */
function changeFeedOf(opts: DatabaseOptions, url: string): ChangeFeed | undefined {
  if (opts.readCache === false) return undefined;
  const direct = opts.listenUrl ?? (opts.pooler === 'transaction' ? undefined : url);
  if (direct === undefined) return undefined;
  const urls = parseMultiHostUrl(direct)?.hostUrls ?? [direct];
  return new ChangeFeed({ urls, warn: opts.warn });
}

function knexLog(warn: ((m: string) => void) | undefined) {
  const emit = (m: unknown) =>
    warn?.(typeof m === 'string' ? m : m instanceof Error ? m.message : String(m));
  return { warn: emit, error: emit, deprecate: emit, debug: () => undefined };
}

/** Open the configured database: a real PostgreSQL through `pg`, or embedded PGlite. */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.url) {
    // Several hosts or target_session_attrs (multi-host.ts): each new connection goes to
    // the first host that qualifies. Parsed first: a bad list fails before any connection.
    const hosts = parseMultiHostUrl(opts.url);
    const knex = knexFactory({
      client: 'pg',
      connection: { connectionString: hosts?.hostUrls[0] ?? opts.url, application_name: 'arbor' },
      pool: { min: 0, max: opts.poolMax ?? 10, acquireTimeoutMillis: 5_000 },
      acquireConnectionTimeout: 5_000,
      log: knexLog(opts.warn),
    });
    if (hosts) connectToFirstQualifying(knex, hosts);
    if (opts.pooler === 'transaction') useUnnamedStatements(knex);
    const changeFeed = changeFeedOf(opts, opts.url);
    changeFeed?.start();
    // --- read replicas (docs/operations.md, "Read replicas") ---
    const replicas = opts.readUrls?.length
      ? new ReadReplicas(knex, opts.readUrls, {
          maxLagMs: opts.maxReplicaLagMs,
          poolMax: opts.poolMax,
          pooler: opts.pooler,
          warn: opts.warn,
        })
      : undefined;
    // --- end read replicas ---
    let closed: Promise<void> | undefined;
    const close = () =>
      (closed ??= (async () => {
        await changeFeed?.close();
        await replicas?.close();
        await knex.destroy();
      })());
    return {
      knex,
      kind: 'postgres',
      ...(replicas ? { replicas } : {}),
      ...(changeFeed ? { changeFeed } : {}),
      close,
    };
  }

  let dir = opts.dataDir;
  let lock: DataDirLock | undefined;
  let ownLock = false;
  if (!dir.startsWith('memory://')) {
    // PGlite is PostgreSQL in this process: a second process on the same files writes its own
    // copy of the pages and WAL, and both corrupt the other's (lost rows, then every open or
    // close failing). One process owns a data directory; any other is refused before it opens.
    lock = opts.lock;
    if (!lock) {
      lock = lockDataDir(opts.dataDir, { role: opts.role ?? 'command' });
      ownLock = true;
    }
    dir = join(opts.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
  }
  const release = () => {
    if (ownLock) lock?.release();
  };
  let pglite: PGlite;
  try {
    pglite = await createPglite(dir, opts);
  } catch (e) {
    release();
    throw e;
  }
  const knex = knexFactory({
    client: PGliteDialect,
    connection: {
      pglite: () => pglite,
    } satisfies PGliteConnectionConfig as Knex.StaticConnectionConfig,
    // PGlite is one connection; the pool serialises work onto it.
    pool: { min: 1, max: 1 },
    log: knexLog(opts.warn),
  });
  let closed: Promise<void> | undefined;
  return {
    knex,
    kind: 'pglite',
    // Through the pool: no query runs on the one connection while the files are read.
    dumpDataDir: async () => {
      const pool = knex.client as {
        acquireConnection(): Promise<unknown>;
        releaseConnection(c: unknown): Promise<void>;
      };
      const conn = await pool.acquireConnection();
      try {
        await pglite.exec('CHECKPOINT');
        return await pglite.dumpDataDir('gzip');
      } finally {
        await pool.releaseConnection(conn);
      }
    },
    close: () =>
      (closed ??= (async () => {
        try {
          // Waits for the query in flight: PGlite's close must not run beside one.
          await knex.destroy();
          await pglite.close();
        } catch (e) {
          // An error inside PostgreSQL that no handler catches leaves the WebAssembly
          // module through emscripten's longjmp, which throws the number Infinity. Closing
          // is the last thing a process does: say what failed and let it exit.
          opts.warn?.(`closing the embedded database failed: ${describe(e)}`);
        } finally {
          release();
        }
      })()),
  };
}

/**
 * PGlite on `dir`: a new directory made a copy of this build's template when there is one
 * (see pglite-template.ts), else as PGlite makes it (initdb). A copy that fails to open
 * leaves nothing behind: the directory is emptied and initdb runs.
 */
async function createPglite(dir: string, opts: DatabaseOptions): Promise<PGlite> {
  const templates = opts.template;
  const fresh =
    templates !== false && !dir.startsWith('memory://') && !existsSync(join(dir, 'PG_VERSION'));
  if (!fresh || !copyTemplate(dir, templates)) return PGlite.create(dir, PGLITE_OPTIONS);
  try {
    return await PGlite.create(dir, PGLITE_OPTIONS);
  } catch (e) {
    opts.warn?.(`the embedded database template did not open (${describe(e)}): running initdb`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return PGlite.create(dir, PGLITE_OPTIONS);
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e === Infinity) return 'PostgreSQL raised an error while shutting down (emscripten longjmp)';
  return String(e);
}
