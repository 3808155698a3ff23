import type { Knex } from 'knex';

/**
 * Revoked API tokens, by `jti` (RFC 7009 at the token endpoint's revocation door,
 * docs/oauth.md). A row is needed only while the token it names could still be presented:
 * `expires_at` is the token's own `exp`, and rows past it are deleted by the store as it
 * writes, so the table holds at most the tokens revoked within the last hour.
 *
 * Every insert is announced on the change feed's channel (migration 0018) as `r:<jti>`,
 * in the writing transaction: every process's cache of revocation answers forgets that
 * jti when the revocation commits, so a revoked token is refused on every worker at once
 * (within the one second a process without the feed keeps an answer).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE api_token_revocations (
      jti text PRIMARY KEY CHECK (length(jti) BETWEEN 1 AND 64),
      identity_uid text NOT NULL CHECK (length(identity_uid) <= 512),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz NOT NULL DEFAULT now()
    )
  `);
  await knex.raw(
    `CREATE INDEX api_token_revocations_expires ON api_token_revocations (expires_at)`,
  );
  await knex.raw(`
    CREATE FUNCTION arbor_announce_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('arbor_changes', 'r:' || NEW.jti);
      RETURN NULL;
    END $$
  `);
  await knex.raw(`
    CREATE TRIGGER api_token_revocations_announce AFTER INSERT OR UPDATE ON api_token_revocations
    FOR EACH ROW EXECUTE FUNCTION arbor_announce_revocation()
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE api_token_revocations`);
  await knex.raw(`DROP FUNCTION arbor_announce_revocation()`);
}
