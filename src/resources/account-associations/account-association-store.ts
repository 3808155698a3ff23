import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type {
  AccountAssociation,
  AmazonAccount,
  AzureTenant,
  GoogleProject,
} from './account-association.js';

export interface AccountAssociationFields {
  name: string;
  description: string;
  amazon: AmazonAccount | null;
  google: GoogleProject | null;
  azure: AzureTenant | null;
}

export interface AccountAssociationStore {
  get(tx: Tx, groupUid: string): Promise<AccountAssociation | undefined>;
  /**
   * @throws RpcError ALREADY_EXISTS when the group has one, NOT_FOUND when the group vanished.
   */
  insert(tx: Tx, groupUid: string, a: AccountAssociationFields): Promise<AccountAssociation>;
  update(
    tx: Tx,
    groupUid: string,
    patch: Partial<AccountAssociationFields>,
  ): Promise<AccountAssociation | undefined>;
  /** @returns false when nothing was there. */
  delete(tx: Tx, groupUid: string): Promise<boolean>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<AccountAssociation>>;
}
