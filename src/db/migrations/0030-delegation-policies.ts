import type { Knex } from 'knex';

/**
 * Delegation policies (docs/oauth.md, Delegation): per identity, which identities may act
 * for it at the token endpoint (RFC 8693 `actor_token`), with which capabilities at most and
 * for how long at most. One row per identity, gone with it (ON DELETE CASCADE). The token
 * endpoint reads it when it issues a delegated token, and the authenticator reads it again
 * on every request such a token makes: a policy changed or removed narrows or ends the
 * tokens already issued under it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE delegation_policies (
      identity_uid text COLLATE "C" PRIMARY KEY REFERENCES identities(uid) ON DELETE CASCADE,
      actors jsonb NOT NULL CHECK (jsonb_typeof(actors) = 'array' AND jsonb_array_length(actors) BETWEEN 1 AND 32),
      capabilities jsonb NOT NULL CHECK (jsonb_typeof(capabilities) = 'array' AND jsonb_array_length(capabilities) BETWEEN 1 AND 64),
      max_lifetime_seconds integer NOT NULL CHECK (max_lifetime_seconds BETWEEN 60 AND 86400),
      set_by text NOT NULL,
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    )
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE delegation_policies`);
}
