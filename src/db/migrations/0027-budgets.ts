import type { Knex } from 'knex';

/**
 * The points each caller has spent of its cost budgets (docs/operations.md, "Budgets"), one
 * row per budget key and window, shared by every worker and replica over this database so
 * that a budget holds however many processes serve it. The columns are the ones
 * rate-limiter-flexible's PostgreSQL store reads and writes (src/db/budget-store.ts runs its
 * statements through Knex); made here, not by the library at run time, so that the table
 * comes and goes with the schema like every other. `key` is text rather than the library's
 * varchar(255): a key names a uid, whose length the uid rules bound, not this table.
 * `expire` is the end of the key's window in epoch milliseconds; rows past it are dead and
 * are deleted now and then by the store.
 *
 * UNLOGGED: a spend writes no WAL, so its commit waits for no disk flush (with a logged
 * table every budgeted call paid two synchronous commits: who-can fell to 6 % of its rate
 * on the bench's PostgreSQL). What that gives up is harmless for a budget: after a crash,
 * or on a standby promoted by a failover, the table starts empty, so every caller starts
 * a fresh window; and no read replica holds it (only the primary reads and writes it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE UNLOGGED TABLE budget_points (
      key text PRIMARY KEY,
      points integer NOT NULL DEFAULT 0,
      expire bigint
    )
  `);
  // The store's clean-up deletes by expiry.
  await knex.raw(`CREATE INDEX budget_points_expire ON budget_points (expire)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE budget_points`);
}
