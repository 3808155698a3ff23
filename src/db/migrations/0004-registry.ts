import type { Knex } from 'knex';

/**
 * Registry repos (under groups) and their tags (under repos). Names are unique within
 * their parent; both tables carry the standard sort indexes so every list is a keyset
 * index scan. Foreign keys RESTRICT: a group with repos, or a repo with tags, stays.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE repos (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      description text NOT NULL DEFAULT '',
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now(),
      CONSTRAINT repos_parent_name_key UNIQUE (parent_uid, name)
    );
    CREATE INDEX repos_parent_name ON repos (parent_uid, name, uid);
    CREATE INDEX repos_parent_created ON repos (parent_uid, created_at, uid);
    CREATE INDEX repos_name ON repos (name, uid);
    CREATE INDEX repos_created ON repos (created_at, uid);

    CREATE TABLE tags (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES repos(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      digest text COLLATE "C" NOT NULL,
      deprecated boolean NOT NULL DEFAULT false,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now(),
      CONSTRAINT tags_parent_name_key UNIQUE (parent_uid, name)
    );
    CREATE INDEX tags_parent_name ON tags (parent_uid, name, uid);
    CREATE INDEX tags_parent_created ON tags (parent_uid, created_at, uid);
    CREATE INDEX tags_parent_updated ON tags (parent_uid, updated_at, uid);
    CREATE INDEX tags_name ON tags (name, uid);
    CREATE INDEX tags_created ON tags (created_at, uid);
    CREATE INDEX tags_updated ON tags (updated_at, uid);
    CREATE INDEX tags_digest ON tags (digest, uid);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE tags; DROP TABLE repos;`);
}
