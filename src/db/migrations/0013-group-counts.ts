import type { Knex } from 'knex';

/**
 * How many groups hang directly (`children`) and anywhere (`descendants`) below each group,
 * kept exact by the group store in the transaction of every create and delete (groups
 * never move, so a write touches one row per ancestor). A list of "everything below an
 * anchor the caller sees whole" reads its totalCount here in O(1) (docs/adr/0003).
 *
 * The backfill counts under a SHARE lock on `groups`, so no create or delete can slip
 * between the count and the end of the migration.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE group_counts (
      uid text COLLATE "C" PRIMARY KEY REFERENCES groups(uid) ON DELETE CASCADE,
      children bigint NOT NULL DEFAULT 0 CHECK (children >= 0),
      descendants bigint NOT NULL DEFAULT 0 CHECK (descendants >= children)
    );
    LOCK TABLE groups IN SHARE MODE;
    INSERT INTO group_counts (uid, children, descendants)
    SELECT g.uid, coalesce(ch.n, 0), coalesce(d.n, 0)
      FROM groups g
      LEFT JOIN (SELECT parent_uid AS uid, count(*) AS n FROM groups
                  WHERE parent_uid IS NOT NULL GROUP BY parent_uid) ch ON ch.uid = g.uid
      LEFT JOIN (SELECT ancestor_uid AS uid, count(*) AS n FROM group_closure
                  GROUP BY ancestor_uid) d ON d.uid = g.uid;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE group_counts');
}
