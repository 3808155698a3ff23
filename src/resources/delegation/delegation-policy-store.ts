import type { Tx } from '../tx.js';
import type { DelegationPolicy } from './delegation-policy.js';

/** Delegation policies by identity (migration 0030). */
export interface DelegationPolicyStore {
  get(tx: Tx, identityUid: string): Promise<DelegationPolicy | undefined>;
  /** Insert or replace. @throws RpcError NOT_FOUND when the identity is gone. */
  set(tx: Tx, p: DelegationPolicy): Promise<void>;
  /** @returns whether there was one. */
  delete(tx: Tx, identityUid: string): Promise<boolean>;
}
