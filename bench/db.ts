import pg from 'pg';
import { openDatabase } from '../src/db/connect.js';
import { migrateLatest } from '../src/db/migrate.js';
import { databaseNameOf, expectedCounts, type Scale } from './scale.js';

const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  url: string;
  name: string;
  /** Whether this run created it. */
  created: boolean;
  /** Given by DATABASE_URL: never dropped by the bench. */
  external: boolean;
}

function withDatabase(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

/** DATABASE_URL as given, or the scale's own (bench/scale.ts databaseNameOf), created if missing. */
export async function ensureDatabase(scale: Scale): Promise<BenchDatabase> {
  if (process.env.DATABASE_URL) {
    const url = process.env.DATABASE_URL;
    return { url, name: new URL(url).pathname.slice(1), created: false, external: true };
  }
  const name = databaseNameOf(scale);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await admin.query(`CREATE DATABASE ${name}`);
    return { url: withDatabase(ADMIN_URL, name), name, created: !rowCount, external: false };
  } finally {
    await admin.end();
  }
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => admin.end());
}

/** Apply Arbor's migrations exactly as `arbor migrate` does. */
export async function migrate(url: string): Promise<string[]> {
  const db = await openDatabase({ url, dataDir: '' });
  try {
    return await migrateLatest(db.knex);
  } finally {
    await db.close();
  }
}

export interface SeedState {
  seeded: boolean;
  /** Rows exist but no marker says the bench wrote them: refuse to touch the database. */
  foreign: boolean;
  /** A marker for another scale: run.ts truncates and reseeds. */
  otherScale?: string;
  /** This scale's marker, but counts of an older shape of the seed: cleared and reseeded. */
  stale?: boolean;
}

const MARKER = `CREATE TABLE IF NOT EXISTS bench_seed (
  scale text PRIMARY KEY, shape jsonb NOT NULL, counts jsonb NOT NULL,
  seconds numeric NOT NULL, seeded_at timestamptz NOT NULL DEFAULT now())`;

/** Whether the database already holds exactly this scale's data (checked by counting). */
export async function seedState(client: pg.ClientBase, scale: Scale): Promise<SeedState> {
  await client.query(MARKER);
  const marks = await client.query<{ scale: string }>('SELECT scale FROM bench_seed');
  const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM groups');
  const groups = Number(rows[0]?.n ?? 0);
  if (marks.rowCount === 0) return { seeded: false, foreign: groups > 0 };
  const mark = marks.rows[0]!.scale;
  if (mark !== scale.name) return { seeded: false, foreign: false, otherScale: mark };
  const want = expectedCounts(scale);
  const c = await client.query<Record<string, string>>(
    `SELECT (SELECT count(*) FROM group_closure) AS closure,
            (SELECT count(*) FROM identities) AS identities,
            (SELECT count(*) FROM role_bindings) AS bindings,
            (SELECT count(*) FROM group_counts) AS counts`,
  );
  const got = c.rows[0]!;
  const ok =
    groups === want.groups &&
    Number(got.closure) === want.closure &&
    Number(got.identities) === want.identities &&
    Number(got.bindings) === want.roleBindings &&
    // Migration 0013 backfills the counters of a seed made before it.
    Number(got.counts) === want.groups;
  // A seed of this scale with other counts: one from before the shape changed.
  return { seeded: ok, foreign: false, ...(ok ? {} : { stale: true }) };
}

/**
 * Remove a stale seed (its marker, and the rows of the seeded tables) so that it can be
 * seeded again. DELETE, not TRUNCATE … CASCADE: that would also empty the built-in roles.
 */
export async function clearSeed(client: pg.ClientBase): Promise<void> {
  await client.query(`SET session_replication_role = replica;
    DELETE FROM role_bindings; DELETE FROM identities; DELETE FROM group_closure;
    DELETE FROM group_counts; DELETE FROM groups; DELETE FROM bench_seed;
    RESET session_replication_role;`);
}

export async function recordSeed(
  client: pg.ClientBase,
  scale: Scale,
  seconds: number,
): Promise<void> {
  await client.query(MARKER);
  await client.query('DELETE FROM bench_seed');
  await client.query(
    'INSERT INTO bench_seed (scale, shape, counts, seconds) VALUES ($1,$2,$3,$4)',
    [scale.name, JSON.stringify(scale), JSON.stringify(expectedCounts(scale)), seconds.toFixed(1)],
  );
}

/** Size of the database and of the bench-relevant relations (tables with their indexes). */
export async function sizes(client: pg.ClientBase): Promise<Record<string, string>> {
  const { rows } = await client.query<{ rel: string; size: string }>(
    `SELECT 'database' AS rel, pg_size_pretty(pg_database_size(current_database())) AS size
     UNION ALL
     SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) FROM pg_class
      WHERE relname IN ('groups','group_closure','group_counts','identities','role_bindings') AND relkind = 'r'`,
  );
  return Object.fromEntries(rows.map((r) => [r.rel, r.size]));
}

export async function databaseBytes(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ b: string }>(
    'SELECT pg_database_size(current_database()) AS b',
  );
  return Number(rows[0]!.b);
}
