import type { Knex } from 'knex';

/**
 * The API tokens Arbor issued and that may still be presented (docs/oauth.md, "Sessions"):
 * what `arbor auth sessions` lists and revokes one by one. A row names a token by `jti`,
 * never the token itself; `parent_jti` is the subject token's when the token was exchanged
 * from an API token, and `ancestors` every jti it was exchanged from (its `arbor_parents`
 * claim, at most four): revoking any of them revokes it. `actor` is the identity acting
 * for the subject (delegation), null otherwise.
 *
 * Rows are written in batches off the request path (the STS is a hot path), so a token may
 * appear a moment after it is issued; rows past `expires_at` are swept in bounded batches.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE api_tokens_issued (
      jti text COLLATE "C" PRIMARY KEY CHECK (length(jti) BETWEEN 1 AND 64),
      identity_uid text COLLATE "C" NOT NULL CHECK (length(identity_uid) <= 512),
      parent_jti text CHECK (length(parent_jti) <= 64),
      ancestors text[] NOT NULL DEFAULT '{}' CHECK (cardinality(ancestors) <= 4),
      actor text CHECK (length(actor) <= 512),
      scope text[] CHECK (cardinality(scope) <= 64),
      groups text[] CHECK (cardinality(groups) <= 16),
      issued_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )
  `);
  await knex.raw(
    `CREATE INDEX api_tokens_issued_identity ON api_tokens_issued (identity_uid, issued_at, jti)`,
  );
  await knex.raw(`CREATE INDEX api_tokens_issued_expires ON api_tokens_issued (expires_at)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE api_tokens_issued`);
}
