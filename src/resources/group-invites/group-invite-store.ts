import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { GroupInvite } from './group-invite.js';

export interface NewGroupInvite {
  uid: string;
  parentUid: string;
  roleUid: string;
  email: string | null;
  singleUse: boolean;
  /** SHA-256 of the code; the code itself is never stored. */
  codeHash: Buffer;
  /** Expiry is `now() + ttl` by the database clock, like every other timestamp. */
  ttlMs: number;
}

/** An invite as redemption needs it: with its code hash and the database's verdict on expiry. */
export interface RedeemableInvite extends GroupInvite {
  codeHash: Buffer;
  expired: boolean;
}

export interface GroupInviteStore {
  get(tx: Tx, uid: string): Promise<GroupInvite | undefined>;
  /** @throws RpcError NOT_FOUND when the group vanished meanwhile. */
  insert(tx: Tx, invite: NewGroupInvite): Promise<GroupInvite>;
  /** Locks the row until the transaction ends, so a single-use code is redeemed once. */
  lockForRedeem(tx: Tx, uid: string): Promise<RedeemableInvite | undefined>;
  markUsed(tx: Tx, uid: string): Promise<void>;
  /** @returns undefined when nothing was there. */
  update(
    tx: Tx,
    uid: string,
    patch: { roleUid?: string; expirationTime?: Date },
  ): Promise<GroupInvite | undefined>;
  /** @returns false when nothing was there. */
  delete(tx: Tx, uid: string): Promise<boolean>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<GroupInvite>>;
}
