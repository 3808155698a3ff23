import type { Knex } from 'knex';

/**
 * - The registry's notifications make tags (spec §5.5): `pushed_at` is the time of the
 *   last registry event applied to a tag, at the microsecond the registry reports, so a
 *   redelivered or overtaken event is recognised and changes nothing. NULL for tags made
 *   through the API.
 * - People sign in (spec §5.2): a user identity is a root-level identity (`parent_uid IS
 *   NULL`) whose claim match is its exact `(issuer, subject)`. The unique index makes that
 *   pair the key, so two first sign-ins at once cannot register the same person twice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE tags ADD COLUMN pushed_at timestamptz;
    CREATE UNIQUE INDEX identities_user_subject
      ON identities ((claim_match->>'issuer'), (claim_match->>'subject'))
      WHERE parent_uid IS NULL;
    CREATE INDEX identity_providers_issuer ON identity_providers ((oidc->>'issuer'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX identity_providers_issuer;
    DROP INDEX identities_user_subject;
    ALTER TABLE tags DROP COLUMN pushed_at;
  `);
}
