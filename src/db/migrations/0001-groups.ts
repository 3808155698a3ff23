import type { Knex } from 'knex';

/**
 * Groups in a uid-path tree. uid, parent and name are C-collated so prefix ranges and
 * keyset seeks are byte-wise index scans. `group_closure` holds one row per (strict
 * ancestor, descendant) with the sort columns copied in, so `descendants_of` in name or
 * creation order is an index-only scan at any subtree size (see docs/adr/0002).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE arbor_secrets (
      name text PRIMARY KEY,
      value bytea NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now()
    );

    CREATE TABLE groups (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" REFERENCES groups(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      description text NOT NULL DEFAULT '',
      resource_limits jsonb NOT NULL DEFAULT '{}'::jsonb,
      verified boolean NOT NULL DEFAULT false,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX groups_parent_name ON groups (parent_uid, name, uid);
    CREATE INDEX groups_parent_created ON groups (parent_uid, created_at, uid);
    CREATE INDEX groups_name ON groups (name, uid);
    CREATE INDEX groups_created ON groups (created_at, uid);

    CREATE TABLE group_closure (
      ancestor_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE CASCADE,
      uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE CASCADE,
      depth smallint NOT NULL,
      name text COLLATE "C" NOT NULL,
      created_at timestamptz(3) NOT NULL,
      PRIMARY KEY (ancestor_uid, uid)
    );
    CREATE INDEX group_closure_name ON group_closure (ancestor_uid, name, uid);
    CREATE INDEX group_closure_created ON group_closure (ancestor_uid, created_at, uid);
    CREATE INDEX group_closure_uid ON group_closure (uid);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE group_closure; DROP TABLE groups; DROP TABLE arbor_secrets;`);
}
