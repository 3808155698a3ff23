import type { Knex } from 'knex';

/**
 * Every committed change to `identities` is announced on the change feed's channel
 * (migration 0018) as `i:<uid>`, so that the STS can keep the identity an exchange names in
 * the read cache (db/read-cache.ts) instead of asking the database on every exchange (its
 * one query was the largest part of an exchange's CPU left). A claim match narrowed or an
 * identity deleted (also by its group's cascade) is forgotten by every process as the
 * change commits. The STS's own lastSeenTime write is announced as well (at most once a
 * minute per identity, by its resolution), which costs a reload, not a wrong answer.
 * Statement-level triggers with transition tables, as 0018's.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE FUNCTION arbor_identities_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('arbor_changes', 'i:*');
  ELSIF TG_OP = 'INSERT' THEN
    PERFORM arbor_announce('i', (SELECT array_agg(DISTINCT uid) FROM changed_new));
  ELSE
    PERFORM arbor_announce('i', (SELECT array_agg(DISTINCT uid) FROM changed_old));
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER identities_announce_insert AFTER INSERT ON identities
  REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION arbor_identities_changed();
CREATE TRIGGER identities_announce_update AFTER UPDATE ON identities
  REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION arbor_identities_changed();
CREATE TRIGGER identities_announce_delete AFTER DELETE ON identities
  REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION arbor_identities_changed();
CREATE TRIGGER identities_announce_truncate AFTER TRUNCATE ON identities
  FOR EACH STATEMENT EXECUTE FUNCTION arbor_identities_changed();
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER identities_announce_insert ON identities;
    DROP TRIGGER identities_announce_update ON identities;
    DROP TRIGGER identities_announce_delete ON identities;
    DROP TRIGGER identities_announce_truncate ON identities;
    DROP FUNCTION arbor_identities_changed();
  `);
}
