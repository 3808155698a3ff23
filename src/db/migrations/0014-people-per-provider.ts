import type { Knex } from 'knex';

/**
 * A person's user identity belongs to the provider that registered it (docs/sign-in.md):
 * `sign_in_provider` is `server` for the server's login client, or the uid of the
 * organization IdentityProvider that registered the person (such people live under that
 * IdP's group, inside its organization). NULL: not a person (a workload identity).
 *
 * The key of a person becomes `(provider, issuer, subject)`: two providers naming the same
 * issuer register two people, and neither signs in as the other's. People registered before
 * this migration were found by `(issuer, subject)` alone, whichever provider vouched; they
 * become the server login client's, the one provider that speaks for every organization.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE identities ADD COLUMN sign_in_provider text COLLATE "C";
    UPDATE identities SET sign_in_provider = 'server' WHERE parent_uid IS NULL;
    DROP INDEX identities_user_subject;
    CREATE UNIQUE INDEX identities_person
      ON identities (sign_in_provider, (claim_match->>'issuer'), (claim_match->>'subject'))
      WHERE sign_in_provider IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX identities_person;
    ALTER TABLE identities DROP COLUMN sign_in_provider;
    CREATE UNIQUE INDEX identities_user_subject
      ON identities ((claim_match->>'issuer'), (claim_match->>'subject'))
      WHERE parent_uid IS NULL;
  `);
}
