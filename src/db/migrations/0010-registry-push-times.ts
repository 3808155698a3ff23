import type { Knex } from 'knex';

/**
 * The registry's notifications (spec §5.5) make tags: `pushed_at` is the time of the
 * last registry event applied to a tag, at the microsecond the registry reports, so a
 * redelivered or overtaken event is recognised and changes nothing. NULL for tags made
 * through the API.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE tags ADD COLUMN pushed_at timestamptz`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE tags DROP COLUMN pushed_at`);
}
