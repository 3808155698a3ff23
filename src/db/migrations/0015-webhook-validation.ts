import type { Knex } from 'knex';

/**
 * The CloudEvents webhook validation handshake (docs/events.md): a subscription delivers
 * only after its sink agreed to it. `validation_state` is PENDING until the sink answered
 * the `OPTIONS` request with `WebHook-Allowed-Origin` (ALLOWED), or answered without it
 * (REFUSED); a new sink starts again at PENDING. `allowed_rate` is the sink's
 * `WebHook-Allowed-Rate` in requests per minute, NULL for no limit.
 *
 * Existing subscriptions start PENDING too: their sinks are asked before the next delivery,
 * which is the point (a sink that never agreed must not keep receiving).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE subscriptions
      ADD COLUMN validation_state text NOT NULL DEFAULT 'PENDING'
        CHECK (validation_state IN ('PENDING', 'ALLOWED', 'REFUSED')),
      ADD COLUMN validated_at timestamptz(3),
      ADD COLUMN allowed_rate integer CHECK (allowed_rate > 0);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE subscriptions
      DROP COLUMN allowed_rate,
      DROP COLUMN validated_at,
      DROP COLUMN validation_state;
  `);
}
