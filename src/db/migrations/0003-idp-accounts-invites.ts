import type { Knex } from 'knex';

/**
 * Identity providers, account associations and group invites. Runs after 0002-iam, whose
 * `roles` table the role references point at.
 *
 * - `identity_providers` hang under a group. The OIDC client secret has its own column so
 *   that no list or get query ever selects it by accident. A role that is some IdP's
 *   default role cannot be deleted (RESTRICT).
 * - `account_associations` are one per group and their uid IS the group uid. `parent_uid`
 *   is the group's parent (NULL for an organization), so `standardList` answers
 *   `children_of=X` (associations of X's direct children) and `descendants_of=X` (of the
 *   groups strictly below X) unchanged. The row is not a child row of its own group in
 *   the `parent_uid` sense, so it is not in child-tables.ts; instead `uid` references the
 *   group ON DELETE RESTRICT and the group store answers the foreign-key violation with
 *   RESOURCE_NOT_EMPTY, like every other child.
 * - `group_invites` hang under a group and keep only a SHA-256 hash of the invite secret.
 *   An invite is useless without its role, so deleting the role deletes its invites.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE identity_providers (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      description text NOT NULL DEFAULT '',
      default_role_uid text COLLATE "C" NOT NULL REFERENCES roles(uid) ON DELETE RESTRICT,
      oidc jsonb NOT NULL,
      oidc_client_secret text NOT NULL DEFAULT '',
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX identity_providers_parent_name ON identity_providers (parent_uid, name, uid);
    CREATE INDEX identity_providers_parent_created ON identity_providers (parent_uid, created_at, uid);
    CREATE INDEX identity_providers_name ON identity_providers (name, uid);
    CREATE INDEX identity_providers_created ON identity_providers (created_at, uid);
    CREATE INDEX identity_providers_role ON identity_providers (default_role_uid);

    CREATE TABLE account_associations (
      uid text COLLATE "C" PRIMARY KEY REFERENCES groups(uid) ON DELETE RESTRICT,
      parent_uid text COLLATE "C" REFERENCES groups(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      description text NOT NULL DEFAULT '',
      amazon jsonb,
      google jsonb,
      azure jsonb,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX account_associations_parent_name ON account_associations (parent_uid, name, uid);
    CREATE INDEX account_associations_parent_created ON account_associations (parent_uid, created_at, uid);
    CREATE INDEX account_associations_name ON account_associations (name, uid);
    CREATE INDEX account_associations_created ON account_associations (created_at, uid);

    CREATE TABLE group_invites (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE RESTRICT,
      role_uid text COLLATE "C" NOT NULL REFERENCES roles(uid) ON DELETE CASCADE,
      email text,
      single_use boolean NOT NULL DEFAULT false,
      code_hash bytea NOT NULL,
      expires_at timestamptz(3) NOT NULL,
      used_at timestamptz(3),
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX group_invites_parent_created ON group_invites (parent_uid, created_at, uid);
    CREATE INDEX group_invites_created ON group_invites (created_at, uid);
    CREATE INDEX group_invites_role ON group_invites (role_uid);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE group_invites;
    DROP TABLE account_associations;
    DROP TABLE identity_providers;
  `);
}
