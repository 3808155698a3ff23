import type { Knex } from 'knex';

/**
 * Vulnerability advisories in the OSV format: global data, under no group. The uid is
 * sha1 of the OSV id (40 hex, flat), `name` is the OSV id, the whole record is kept in
 * `document`. Filter columns are extracted at import: `aliases` (text[], GIN) for the
 * id-or-alias filter, `packages` (jsonb array of {e, b, n}: ecosystem, its base before
 * ":", package name; GIN jsonb_path_ops) so that package and ecosystem filters match the
 * same affected entry, and `severity` (derived level) for the severity filter.
 * `created_at` is OSV `published` (else `modified`), `updated_at` is OSV `modified`,
 * `imported_at` is when Arbor last wrote the row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE advisories (
      uid text COLLATE "C" PRIMARY KEY CHECK (uid ~ '^[0-9a-f]{40}$'),
      parent_uid text COLLATE "C" CHECK (parent_uid IS NULL),
      name text COLLATE "C" NOT NULL,
      aliases text[] NOT NULL DEFAULT '{}',
      packages jsonb NOT NULL DEFAULT '[]'::jsonb,
      severity text CHECK (severity IN ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL')),
      summary text NOT NULL DEFAULT '',
      withdrawn_at timestamptz(3),
      document jsonb NOT NULL,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      imported_at timestamptz(3) NOT NULL DEFAULT now(),
      CONSTRAINT advisories_name_key UNIQUE (name)
    );
    CREATE INDEX advisories_name ON advisories (name, uid);
    CREATE INDEX advisories_created ON advisories (created_at, uid);
    CREATE INDEX advisories_updated ON advisories (updated_at, uid);
    CREATE INDEX advisories_severity ON advisories (severity, uid);
    CREATE INDEX advisories_aliases ON advisories USING gin (aliases);
    CREATE INDEX advisories_packages ON advisories USING gin (packages jsonb_path_ops);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE advisories;`);
}
