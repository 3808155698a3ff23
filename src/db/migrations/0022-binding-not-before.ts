import type { Knex } from 'knex';

/**
 * A role binding may start later than it is made (`not_before`, a scheduled grant): before
 * that instant it grants nothing, from it on as any binding, until `expire_time` if set.
 * NULL: it grants from creation. The check keeps a window non-empty where both are set.
 * Adding a NULL column rewrites no row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      ADD COLUMN not_before timestamptz(3),
      ADD CONSTRAINT role_bindings_window
        CHECK (not_before IS NULL OR expire_time IS NULL OR not_before < expire_time);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings DROP CONSTRAINT role_bindings_window, DROP COLUMN not_before;
  `);
}
