/**
 * The service layer's view of storage: an opaque transaction handle and the unit of
 * work that hands it out. Services own transaction boundaries; only db/ knows what a
 * handle really is, so no Knex type leaks above it.
 */
declare const txBrand: unique symbol;
export interface Tx {
  readonly [txBrand]: true;
}

export interface UnitOfWork {
  /**
   * Run `fn` in one transaction; commit when it resolves, roll back when it throws.
   * `o.uncached`: it writes nothing a read cache or a shared count holds (the last-used
   * flush), so the caches need not pause for it nor counts be forgotten.
   */
  run<T>(fn: (tx: Tx) => Promise<T>, o?: { uncached?: boolean }): Promise<T>;
  /**
   * Run reads in one read-only REPEATABLE READ transaction: every statement sees the same
   * snapshot, and a write inside fails. For answers that must be one consistent picture.
   * `o.statementTimeoutMs`: no statement of it may run longer (`SET LOCAL
   * statement_timeout`); one that does is RESOURCE_EXHAUSTED. PGlite accepts the setting
   * but does not enforce it (one process without timers): bound the rows read as well.
   * @throws RpcError RESOURCE_EXHAUSTED when a statement passes the timeout.
   */
  snapshot<T>(fn: (tx: Tx) => Promise<T>, o?: { statementTimeoutMs?: number }): Promise<T>;
  /** Run reads outside a transaction (one pooled connection per statement). */
  read<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Like `read`, for a Get or List of a request (never an authorization lookup): may be
   * served by a read replica within the request's consistency scope (./consistency.ts).
   */
  replicaRead<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Grows with every transaction this process ran: anything remembered from reads is stale. */
  readonly writeGeneration: number;
}
