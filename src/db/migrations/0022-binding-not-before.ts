import type { Knex } from 'knex';

/**
 * A role binding may start later than it is made (`not_before`, a scheduled grant): before
 * that instant it grants nothing, from it on as any binding, until `expire_time` if set.
 * NULL: it grants from creation. The check keeps a window non-empty where both are set.
 * Adding a NULL column rewrites no row.
 *
 * Liveness now reads `not_before` too, so who-can's index (migration 0019) carries it
 * beside `expire_time`, keeping those scans index-only; rebuilt under its own name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      ADD COLUMN not_before timestamptz(3),
      ADD CONSTRAINT role_bindings_window
        CHECK (not_before IS NULL OR expire_time IS NULL OR not_before < expire_time);
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_unique,
      ADD CONSTRAINT role_bindings_unique UNIQUE (parent_uid, identity_uid, role_uid)
        INCLUDE (expire_time, not_before, uid);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_unique,
      ADD CONSTRAINT role_bindings_unique UNIQUE (parent_uid, identity_uid, role_uid)
        INCLUDE (expire_time, uid);
    ALTER TABLE role_bindings DROP CONSTRAINT role_bindings_window, DROP COLUMN not_before;
  `);
}
