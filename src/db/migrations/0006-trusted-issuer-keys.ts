import type { Knex } from 'knex';

/**
 * Issuer key sets Arbor trusts without discovery: a cluster's service-account keys,
 * read by the reconciler with its own credentials (the cluster's discovery endpoint is
 * usually unreachable from outside), and consulted by the STS before any fetch.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE trusted_issuer_keys (
      issuer text PRIMARY KEY,
      jwks jsonb NOT NULL,
      source text NOT NULL,
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE trusted_issuer_keys');
}
