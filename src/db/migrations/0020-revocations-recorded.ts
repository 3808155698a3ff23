import type { Knex } from 'knex';

/**
 * Every role binding that goes away is recorded on its own (docs/events.md).
 *
 * - `role_bindings_identity_fk` was `ON DELETE CASCADE`: deleting an identity deleted its
 *   bindings inside the database, where no audit record or event could follow them. It is
 *   `RESTRICT` now: the identity service revokes them first, one record each, and a path
 *   that forgot to would fail instead of deleting grants unseen.
 * - `audit_events.cause`: why a change nobody asked for directly was made (the identity a
 *   binding went with, or its expiry); `cascaded`: what went with a change.
 *
 * Adding columns (NULL, or a constant default) rewrites no row, so the append-only
 * trigger is not involved.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE audit_events
      ADD COLUMN cause jsonb,
      ADD COLUMN cascaded jsonb NOT NULL DEFAULT '[]';
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_identity_fk,
      ADD CONSTRAINT role_bindings_identity_fk
        FOREIGN KEY (identity_uid) REFERENCES identities(uid) ON DELETE RESTRICT;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_identity_fk,
      ADD CONSTRAINT role_bindings_identity_fk
        FOREIGN KEY (identity_uid) REFERENCES identities(uid) ON DELETE CASCADE;
    ALTER TABLE audit_events DROP COLUMN cascaded, DROP COLUMN cause;
  `);
}
