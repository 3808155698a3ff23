import type { Grant } from '../../auth/authorizer.js';
import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { ClaimMatch, Identity, StaticKeys } from './identity.js';

export interface NewIdentity {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
  claimMatch: ClaimMatch | null;
  staticKeys: StaticKeys | null;
  /** Also the first `lastSeenTime`; static keys expire relative to it. */
  createTime: Date;
}

/** Columns an update may write; `null` clears a relationship. */
export interface IdentityChanges {
  name?: string;
  description?: string;
  claimMatch?: ClaimMatch | null;
  staticKeys?: StaticKeys | null;
}

export interface IdentityStore {
  /** `forUpdate` locks the row for the rest of the transaction. */
  get(tx: Tx, uid: string, forUpdate?: boolean): Promise<Identity | undefined>;
  /** @throws RpcError NOT_FOUND when the parent group vanished meanwhile. */
  insert(tx: Tx, identity: NewIdentity): Promise<Identity>;
  update(tx: Tx, uid: string, changes: IdentityChanges): Promise<Identity | undefined>;
  /** Deletes the identity's role bindings with it. @returns false when nothing was there. */
  delete(tx: Tx, uid: string): Promise<boolean>;
  /**
   * Record a federation at `time` (never moves backwards; does not touch `updateTime`);
   * with `dueBefore`, only when the recorded time is older than that (else no write).
   */
  touchLastSeen(tx: Tx, uid: string, time: Date, dueBefore?: Date): Promise<void>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<Identity>>;
  /** What the identity's role bindings grant, one entry per group it is bound at. */
  grantsOf(tx: Tx, uid: string): Promise<Grant[]>;
}
