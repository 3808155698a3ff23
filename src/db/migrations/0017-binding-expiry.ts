import type { Knex } from 'knex';

/**
 * A role binding may expire (`expire_time`): from that instant it grants nothing, and the
 * expiry sweeper deletes it once the retention period has passed. NULL: it never expires.
 * The partial index serves the sweeper's scan of expired rows only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings ADD COLUMN expire_time timestamptz(3);
    CREATE INDEX role_bindings_expire ON role_bindings (expire_time, uid)
      WHERE expire_time IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX role_bindings_expire;
    ALTER TABLE role_bindings DROP COLUMN expire_time;
  `);
}
