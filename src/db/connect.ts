import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGliteDialect, type PGliteConnectionConfig } from '@harryplusplus/knex-pglite';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { makeTimestamptzParser } from './timestamptz-parser.js';

// int8 (COUNT(*)) stays a string: totalCount is an int64 rendered as a decimal string anyway.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);
// timestamptz read by fixed positions (see timestamptz-parser.ts), pg's own parser otherwise.
pg.types.setTypeParser(
  pg.types.builtins.TIMESTAMPTZ,
  makeTimestamptzParser(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ)),
);

export type DatabaseKind = 'postgres' | 'pglite';

export interface Database {
  readonly knex: Knex;
  readonly kind: DatabaseKind;
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
}

function knexLog(warn: ((m: string) => void) | undefined) {
  const emit = (m: unknown) =>
    warn?.(typeof m === 'string' ? m : m instanceof Error ? m.message : String(m));
  return { warn: emit, error: emit, deprecate: emit, debug: () => undefined };
}

/** Open the configured database: a real PostgreSQL through `pg`, or embedded PGlite. */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.url) {
    const knex = knexFactory({
      client: 'pg',
      connection: { connectionString: opts.url, application_name: 'arbor' },
      pool: { min: 0, max: opts.poolMax ?? 10, acquireTimeoutMillis: 5_000 },
      acquireConnectionTimeout: 5_000,
      log: knexLog(opts.warn),
    });
    return { knex, kind: 'postgres', close: () => knex.destroy() };
  }

  let dir = opts.dataDir;
  if (!dir.startsWith('memory://')) {
    dir = join(opts.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
  }
  const pglite = await PGlite.create(dir);
  const knex = knexFactory({
    client: PGliteDialect,
    connection: {
      pglite: () => pglite,
    } satisfies PGliteConnectionConfig as Knex.StaticConnectionConfig,
    // PGlite is one connection; the pool serialises work onto it.
    pool: { min: 1, max: 1 },
    log: knexLog(opts.warn),
  });
  return {
    knex,
    kind: 'pglite',
    close: async () => {
      await knex.destroy();
      await pglite.close();
    },
  };
}
