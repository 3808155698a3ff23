import type { Knex } from 'knex';
import { BUILTIN_ROLES } from '../../resources/roles/builtin-roles.js';

/**
 * Identities, roles and role bindings.
 *
 * - identities hang under a group (`parent_uid`; NULL is reserved for root-level human
 *   identities). Exactly one of `claim_match` / `static_keys` is set.
 * - roles hang under a group; built-ins have `parent_uid IS NULL` and flat uids.
 * - role_bindings hang under the group they grant at. Deleting an identity deletes its
 *   bindings; a bound role cannot be deleted (RESTRICT). One binding per
 *   (group, identity, role). `role_bindings_identity` serves the per-request grant lookup.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE identities (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" REFERENCES groups(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      description text NOT NULL DEFAULT '',
      claim_match jsonb,
      static_keys jsonb,
      last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now(),
      CONSTRAINT identities_one_relationship CHECK ((claim_match IS NULL) <> (static_keys IS NULL))
    );
    CREATE INDEX identities_parent_name ON identities (parent_uid, name, uid);
    CREATE INDEX identities_parent_created ON identities (parent_uid, created_at, uid);
    CREATE INDEX identities_name ON identities (name, uid);
    CREATE INDEX identities_created ON identities (created_at, uid);

    CREATE TABLE roles (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" REFERENCES groups(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      description text NOT NULL DEFAULT '',
      capabilities jsonb NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX roles_parent_name ON roles (parent_uid, name, uid);
    CREATE INDEX roles_parent_created ON roles (parent_uid, created_at, uid);
    CREATE INDEX roles_name ON roles (name, uid);
    CREATE INDEX roles_created ON roles (created_at, uid);

    CREATE TABLE role_bindings (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE RESTRICT,
      identity_uid text COLLATE "C" NOT NULL
        CONSTRAINT role_bindings_identity_fk REFERENCES identities(uid) ON DELETE CASCADE,
      role_uid text COLLATE "C" NOT NULL
        CONSTRAINT role_bindings_role_fk REFERENCES roles(uid) ON DELETE RESTRICT,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now(),
      CONSTRAINT role_bindings_unique UNIQUE (parent_uid, identity_uid, role_uid)
    );
    CREATE INDEX role_bindings_parent_created ON role_bindings (parent_uid, created_at, uid);
    CREATE INDEX role_bindings_created ON role_bindings (created_at, uid);
    CREATE INDEX role_bindings_identity ON role_bindings (identity_uid, role_uid);
    CREATE INDEX role_bindings_role ON role_bindings (role_uid);
  `);
  await upsertBuiltinRoles(knex);
}

/**
 * Write the built-in roles as `resources/roles/builtin-roles.ts` defines them now.
 * A later migration that changes a capability set calls this again.
 */
export async function upsertBuiltinRoles(knex: Knex): Promise<void> {
  await knex('roles')
    .insert(
      BUILTIN_ROLES.map((r) => ({
        uid: r.uid,
        parent_uid: null,
        name: r.name,
        description: r.description,
        capabilities: JSON.stringify(r.capabilities),
      })),
    )
    .onConflict('uid')
    .merge(['name', 'description', 'capabilities', 'updated_at']);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE role_bindings; DROP TABLE roles; DROP TABLE identities;`);
}
