import type { Knex } from 'knex';

/**
 * Identity-provider client secrets are sealed (AES-256-GCM, see `auth/secret-box.ts`).
 * The key is not the database's to know, so this migration only marks which rows are
 * sealed; rows written before it (`false`) hold plain text, which every start of the
 * server seals with the current key (`IdentityProviderService.resealClientSecrets`)
 * before it serves a request. An empty secret (none) stays empty and counts as sealed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE identity_providers
      ADD COLUMN oidc_client_secret_sealed boolean NOT NULL DEFAULT false;
    UPDATE identity_providers SET oidc_client_secret_sealed = true WHERE oidc_client_secret = '';
  `);
}

/** Sealed values stay sealed: rolling back cannot decrypt without the key. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE identity_providers DROP COLUMN oidc_client_secret_sealed');
}
