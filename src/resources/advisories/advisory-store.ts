import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { Advisory, NewAdvisory } from './advisory.js';

export interface AdvisoryStore {
  get(tx: Tx, uid: string): Promise<Advisory | undefined>;
  /** Filters: `id` (OSV id or alias), `package`, `ecosystem` (same affected entry), `severity`. */
  list(tx: Tx, q: PageQuery): Promise<StorePage<Advisory>>;
  /** The stored OSV `modified` of those of `uids` that exist. */
  modifiedOf(tx: Tx, uids: readonly string[]): Promise<Map<string, Date>>;
  /**
   * Insert new records and overwrite stored ones whose `modified` is strictly older;
   * anything else is left untouched (no write). @returns the uids actually written.
   */
  upsert(tx: Tx, rows: readonly NewAdvisory[]): Promise<Set<string>>;
}
