import type { Knex } from 'knex';

/**
 * Who-can reads the live bindings of a few groups (the asked group's ancestry) in
 * identity order. The unique index on `(parent_uid, identity_uid, role_uid)` already gives
 * that order; carrying `expire_time` (liveness) and `uid` (the caller's visibility of the
 * binding) in it too lets those scans be index-only: a page merges the ancestors' ordered
 * scans and stops after one page, and the count reads index pages only. The constraint is
 * rebuilt under its own name, so no second index is written on every binding change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_unique,
      ADD CONSTRAINT role_bindings_unique UNIQUE (parent_uid, identity_uid, role_uid)
        INCLUDE (expire_time, uid);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_unique,
      ADD CONSTRAINT role_bindings_unique UNIQUE (parent_uid, identity_uid, role_uid);
  `);
}
