import { ancestryOf } from '../../core/uidp.js';
import {
  DEFAULT_TIMEOUT_SECONDS,
  type AccessRequest,
  type AccessRequestState,
  type Approval,
} from '../../resources/access-requests/access-request.js';
import type {
  AccessRequestStore,
  Closing,
  NewAccessRequest,
  RequestPolicy,
} from '../../resources/access-requests/access-request-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { standardList, type StandardListSpec } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

const T = 'access_requests';

interface Row {
  uid: string;
  parent_uid: string;
  requester_uid: string;
  role_uid: string;
  reason: string;
  duration_seconds: number;
  not_before: Date | null;
  state: AccessRequestState;
  approvals_required: number;
  approvals: unknown;
  closed_by: string | null;
  close_reason: string | null;
  binding_uid: string | null;
  timeout_time: Date;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'uid',
  'parent_uid',
  'requester_uid',
  'role_uid',
  'reason',
  'duration_seconds',
  'not_before',
  'state',
  'approvals_required',
  'approvals',
  'closed_by',
  'close_reason',
  'binding_uid',
  'timeout_time',
  'created_at',
  'updated_at',
].map((c) => `${T}.${c}`);

/** jsonb as stored: `[{ approver, time, reason }]`, time in RFC 3339. */
function approvalsOf(v: unknown): Approval[] {
  const list = (typeof v === 'string' ? JSON.parse(v) : v) as Array<{
    approver: string;
    time: string;
    reason?: string;
  }>;
  return (list ?? []).map((a) => ({
    approver: a.approver,
    time: new Date(a.time),
    reason: a.reason ?? '',
  }));
}

function toRequest(r: Row): AccessRequest {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    requesterUid: r.requester_uid,
    roleUid: r.role_uid,
    reason: r.reason,
    durationSeconds: r.duration_seconds,
    ...(r.not_before ? { notBefore: r.not_before } : {}),
    state: r.state,
    approvalsRequired: r.approvals_required,
    approvals: approvalsOf(r.approvals),
    ...(r.closed_by === null ? {} : { closedBy: r.closed_by }),
    ...(r.close_reason === null ? {} : { closeReason: r.close_reason }),
    ...(r.binding_uid === null ? {} : { bindingUid: r.binding_uid }),
    timeoutTime: r.timeout_time,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

const stored = (approvals: Approval[]) =>
  JSON.stringify(
    approvals.map((a) => ({ approver: a.approver, time: a.time.toISOString(), reason: a.reason })),
  );

function listSpec(self: string | undefined): StandardListSpec {
  return {
    table: T,
    sort: { created_at: 'created_at' },
    filters: {
      state: `${T}.state`,
      requester: `${T}.requester_uid`,
      role: `${T}.role_uid`,
    },
    select: COLUMNS,
    // The requester sees its own requests wherever they are.
    ...(self === undefined
      ? {}
      : { alwaysVisible: (qb) => void qb.where(`${T}.requester_uid`, self) }),
  };
}

export class KnexAccessRequestStore implements AccessRequestStore {
  async insert(tx: Tx, r: NewAccessRequest): Promise<AccessRequest> {
    const k = kx(tx);
    const [row] = (await k(T)
      .insert({
        uid: r.uid,
        parent_uid: r.parentUid,
        requester_uid: r.requesterUid,
        role_uid: r.roleUid,
        reason: r.reason,
        duration_seconds: r.durationSeconds,
        not_before: r.notBefore ?? null,
        approvals_required: r.approvalsRequired,
        timeout_time: k.raw(`now() + make_interval(secs => ?::double precision)`, [
          r.timeoutSeconds,
        ]),
      })
      .returning(COLUMNS)) as Row[];
    return toRequest(row!);
  }

  async get(tx: Tx, uid: string): Promise<AccessRequest | undefined> {
    const row = (await kx(tx)(T).where(`${T}.uid`, uid).first(COLUMNS)) as Row | undefined;
    return row && toRequest(row);
  }

  async lock(tx: Tx, uid: string): Promise<AccessRequest | undefined> {
    const row = (await kx(tx)(T).where(`${T}.uid`, uid).forUpdate().first(COLUMNS)) as
      Row | undefined;
    return row && toRequest(row);
  }

  async addApproval(tx: Tx, uid: string, approvals: Approval[]): Promise<AccessRequest> {
    const k = kx(tx);
    const [row] = (await k(T)
      .where({ uid })
      .update({ approvals: stored(approvals), updated_at: k.fn.now() })
      .returning(COLUMNS)) as Row[];
    return toRequest(row!);
  }

  async close(tx: Tx, uid: string, c: Closing): Promise<AccessRequest> {
    const k = kx(tx);
    const [row] = (await k(T)
      .where({ uid, state: 'PENDING' })
      .update({
        state: c.state,
        ...(c.approvals ? { approvals: stored(c.approvals) } : {}),
        closed_by: c.closedBy ?? null,
        close_reason: c.closeReason ?? null,
        binding_uid: c.bindingUid ?? null,
        updated_at: k.fn.now(),
      })
      .returning(COLUMNS)) as Row[];
    if (!row) throw new Error(`access request ${uid} was not pending under its lock`);
    return toRequest(row);
  }

  async timedOut(tx: Tx, limit: number): Promise<AccessRequest[]> {
    const rows = (await kx(tx)(T)
      .where(`${T}.state`, 'PENDING')
      .where(`${T}.timeout_time`, '<=', kx(tx).fn.now())
      .orderBy([
        { column: `${T}.timeout_time`, order: 'asc' },
        { column: `${T}.uid`, order: 'asc' },
      ])
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .select(COLUMNS)) as Row[];
    return rows.map(toRequest);
  }

  async list(tx: Tx, q: PageQuery, self?: string): Promise<StorePage<AccessRequest>> {
    const page = await standardList<Row>(kx(tx), listSpec(self), q);
    return { ...page, items: page.items.map(toRequest) };
  }

  async policyAt(tx: Tx, groupUid: string): Promise<RequestPolicy> {
    // The nearest group on the ancestry with a policy: the longest uid is the deepest.
    const row = (await kx(tx)('access_request_policies')
      .whereIn('group_uid', ancestryOf(groupUid))
      .orderByRaw('length(group_uid) DESC')
      .first('group_uid', 'approvals', 'timeout_seconds')) as
      { group_uid: string; approvals: number; timeout_seconds: number } | undefined;
    if (!row) return { approvals: 1, timeoutSeconds: DEFAULT_TIMEOUT_SECONDS };
    return {
      approvals: row.approvals,
      timeoutSeconds: row.timeout_seconds,
      groupUid: row.group_uid,
    };
  }

  async setPolicy(
    tx: Tx,
    groupUid: string,
    p: { approvals: number; timeoutSeconds: number },
  ): Promise<void> {
    const k = kx(tx);
    await k('access_request_policies')
      .insert({
        group_uid: groupUid,
        approvals: p.approvals,
        timeout_seconds: p.timeoutSeconds,
      })
      .onConflict('group_uid')
      .merge({ approvals: p.approvals, timeout_seconds: p.timeoutSeconds, updated_at: k.fn.now() });
  }
}
