import type { Knex } from 'knex';

/**
 * What sits between Arbor and PostgreSQL (DATABASE_POOLER):
 * - `none`: a direct connection, or a pooler in session mode (one server connection per
 *   client connection for its whole life). Hot-path statements are named prepared
 *   statements, parsed once per connection.
 * - `transaction`: a pooler in transaction mode (PgBouncer's `pool_mode = transaction`,
 *   most managed poolers). Consecutive statements of one client connection may run on
 *   different server connections, so nothing may outlive a transaction on the server:
 *   no named prepared statements (PgBouncer 1.18 cannot carry them: the next statement
 *   lands where the name was never prepared, SQLSTATE 26000), and no session state.
 *   Arbor sets none otherwise (no SET, LISTEN, temporary tables or session advisory
 *   locks; its one advisory lock is transaction-scoped), which test/ha's pooler pass holds.
 */
export type PoolerMode = 'none' | 'transaction';

const unnamed = new WeakSet<object>();

/** Every statement on `knex` runs unnamed from now on (a transaction-mode pooler). */
export function useUnnamedStatements(knex: Knex): void {
  unnamed.add(knex.client as object);
}

/** Whether named prepared statements are off for this Knex (or a transaction of it). */
export function unnamedStatements(k: Knex | Knex.Transaction): boolean {
  const client = k.client as object;
  // A transaction's client derives from its Knex's (Object.create), so walk the chain.
  for (let c: object | null = client; c !== null; c = Object.getPrototypeOf(c) as object | null) {
    if (unnamed.has(c)) return true;
  }
  return false;
}
