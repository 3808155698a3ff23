import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { AuditEvent } from './audit-event.js';

/** Append-only storage of the audit trail; appending also fills the delivery outbox. */
export interface AuditStore {
  /**
   * Append `e` and queue it for every subscription at or above its resource whose type
   * filter matches, in the caller's transaction.
   */
  append(tx: Tx, e: AuditEvent): Promise<void>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<AuditEvent>>;
}
