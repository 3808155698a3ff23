import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { AccessRequest, AccessRequestState, Approval } from './access-request.js';

export interface NewAccessRequest {
  uid: string;
  parentUid: string;
  requesterUid: string;
  roleUid: string;
  reason: string;
  durationSeconds: number;
  notBefore?: Date;
  approvalsRequired: number;
  timeoutSeconds: number;
}

/** The request policy in force at a group: its own, or the nearest ancestor's. */
export interface RequestPolicy {
  approvals: number;
  timeoutSeconds: number;
  /** The group that set it; absent: the defaults. */
  groupUid?: string;
}

/** A request's final state and what goes with it. */
export interface Closing {
  state: Exclude<AccessRequestState, 'PENDING'>;
  approvals?: Approval[];
  closedBy?: string;
  closeReason?: string;
  bindingUid?: string;
}

/**
 * Who made an identity what it is, as the audit trail recorded it: for each root, every
 * identity reachable upwards through "created or changed this identity" and "created or
 * changed one of its current bindings" (the root itself included).
 */
export type Provenance = Map<string, Set<string>>;

export interface AccessRequestStore {
  /**
   * @throws RpcError ALREADY_EXISTS naming the pending request of the same requester, role
   *   and group (the database's partial unique index decides, whatever the race).
   */
  insert(tx: Tx, r: NewAccessRequest): Promise<AccessRequest>;
  /**
   * The requests `requesterUid` has pending (timed out or not), locked, read under a
   * transaction-scoped lock on that requester: concurrent asks by one requester are counted
   * one after another.
   */
  pendingOf(tx: Tx, requesterUid: string): Promise<AccessRequest[]>;
  /** Who made each of `identityUids`, transitively (see `Provenance`). */
  provenance(tx: Tx, identityUids: readonly string[]): Promise<Provenance>;
  get(tx: Tx, uid: string): Promise<AccessRequest | undefined>;
  /** The row, locked for this transaction (approvals and closes are serialised on it). */
  lock(tx: Tx, uid: string): Promise<AccessRequest | undefined>;
  /** Record another approval on a pending request. */
  addApproval(tx: Tx, uid: string, approvals: Approval[]): Promise<AccessRequest>;
  close(tx: Tx, uid: string, c: Closing): Promise<AccessRequest>;
  /** Pending requests past their timeout, locked (skipping others' locks), oldest first. */
  timedOut(tx: Tx, limit: number): Promise<AccessRequest[]>;
  /** A page of requests the caller may see: `q.visibility`, or its own (`self`). */
  list(tx: Tx, q: PageQuery, self?: string): Promise<StorePage<AccessRequest>>;
  /** The policy in force at `groupUid`: its own, else the nearest ancestor's, else the defaults. */
  policyAt(tx: Tx, groupUid: string): Promise<RequestPolicy>;
  setPolicy(
    tx: Tx,
    groupUid: string,
    p: { approvals: number; timeoutSeconds: number },
  ): Promise<void>;
}
