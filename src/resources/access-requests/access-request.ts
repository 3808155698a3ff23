import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';

/** Where a request stands. Only PENDING changes; every other state is final. */
export type AccessRequestState = 'PENDING' | 'APPROVED' | 'DENIED' | 'CANCELLED' | 'EXPIRED';

/** One approver's yes, in the order given. */
export interface Approval {
  /** The approving identity's uid (or `admin`). */
  approver: string;
  time: Date;
  reason: string;
}

/**
 * An identity asking for a role at a group for a while, with a reason. Approved by N of
 * those who may create that binding themselves; the N-th approval makes the expiring
 * binding (`bindingUid`). Everything but the ask is server-owned.
 */
export interface AccessRequest {
  uid: string;
  /** The group the role is asked at; the uid hangs under it. */
  parentUid: string;
  /** Who asks: always the caller that created the request (never taken from input). */
  requesterUid: string;
  roleUid: string;
  reason: string;
  /** How long the binding lasts once it starts, in seconds. */
  durationSeconds: number;
  /** Optional scheduled start of the binding; absent: from approval. */
  notBefore?: Date;
  state: AccessRequestState;
  /** How many distinct approvers must say yes: the group's policy when the request was made. */
  approvalsRequired: number;
  approvals: Approval[];
  /** Who denied or cancelled it, and why (absent while pending, and when approved or expired). */
  closedBy?: string;
  closeReason?: string;
  /** The binding the final approval made. */
  bindingUid?: string;
  /** A pending request still undecided at this instant is closed as EXPIRED. */
  timeoutTime: Date;
  createTime: Date;
  updateTime: Date;
  /**
   * Answers only: the group, requester and role as paths of names, where the caller sees them
   * (the requester and role also, from the organization, where it may approve the request).
   */
  groupPath?: string;
  requesterPath?: string;
  rolePath?: string;
}

export const ACCESS_REQUEST_TYPE = 'iam.arbor.dev/AccessRequest';

export const ACCESS_REQUEST_LIST: ListSpec = {
  kind: 'access_requests',
  orderBy: ['uid', 'created_at'],
  defaultOrder: { field: 'created_at', direction: 'desc' },
  filters: { state: 'string', requester: 'uid', role: 'uid' },
};

/** Nothing is updated through a PATCH: requests move by approve, deny, cancel and timeout. */
export const ACCESS_REQUEST_UPDATE: UpdateSpec = {
  mutable: {},
  outputOnly: [
    'uid',
    'requesterUid',
    'state',
    'approvalsRequired',
    'approvals',
    'closedBy',
    'closeReason',
    'bindingUid',
    'timeoutTime',
    'createTime',
    'updateTime',
  ],
};

/** How long a request waits for its approvals, unless the group's policy says otherwise. */
export const DEFAULT_TIMEOUT_SECONDS = 7 * 24 * 3600;
/**
 * How many requests one identity may have pending at once: enough for real work (a few
 * roles at a few groups), and a bound on the rows, audit records, events and inbox lines
 * one identity can cause.
 */
export const MAX_PENDING_PER_REQUESTER = 20;
/** The longest a requested binding may last: 90 days. */
export const MAX_DURATION_SECONDS = 90 * 24 * 3600;
