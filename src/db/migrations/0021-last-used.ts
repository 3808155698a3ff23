import type { Knex } from 'knex';

/**
 * When each role binding last granted a decision, in a table of its own rather than a
 * column of `role_bindings`: a write there would be announced on the change feed (the
 * bindings trigger of 0018) and make every worker forget the identity's grants every few
 * seconds, and it would contend with the row locks of binding updates. A row is written
 * by the last-used flush (`UsageFlusher`), at most once per flush interval per process; no
 * row: never used (the findings count from the binding's createTime). Deleting a binding
 * deletes its row. An identity's last authentication is its existing `last_seen_at`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE binding_usage (
      binding_uid text COLLATE "C" PRIMARY KEY
        REFERENCES role_bindings(uid) ON DELETE CASCADE,
      last_used_at timestamptz(3) NOT NULL
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE binding_usage;`);
}
