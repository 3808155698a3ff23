import type { Knex } from 'knex';

/**
 * `audit_events.actors`: for a change made with a delegated token (RFC 8693 `actor_token`,
 * docs/oauth.md), the identities that acted for the record's actor, as the token's `act`
 * nests them (the actor the subject's policy names first); NULL for every other change and
 * for records written before. At most four uids, as a delegation chain is.
 *
 * Adding a NULL column rewrites no row, so the append-only trigger is not involved.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE audit_events
      ADD COLUMN actors jsonb,
      ADD CONSTRAINT audit_events_actors_shape CHECK (
        actors IS NULL OR (
          jsonb_typeof(actors) = 'array'
          AND jsonb_array_length(actors) BETWEEN 1 AND 4
        )
      );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE audit_events DROP CONSTRAINT audit_events_actors_shape, DROP COLUMN actors;
  `);
}
