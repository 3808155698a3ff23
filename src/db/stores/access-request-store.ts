import { alreadyExists, RpcError } from '../../core/rpc-error.js';
import { ancestryOf } from '../../core/uidp.js';
import {
  ACCESS_REQUEST_TYPE,
  DEFAULT_TIMEOUT_SECONDS,
  type AccessRequest,
  type AccessRequestState,
  type Approval,
} from '../../resources/access-requests/access-request.js';
import type {
  AccessRequestStore,
  Closing,
  NewAccessRequest,
  Provenance,
  RequestPolicy,
} from '../../resources/access-requests/access-request-store.js';
import { GROUP_INVITE_TYPE } from '../../resources/group-invites/group-invite.js';
import { IDENTITY_TYPE } from '../../resources/identities/identity.js';
import { ROLE_BINDING_TYPE } from '../../resources/role-bindings/role-binding.js';
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

/** ALREADY_EXISTS naming the pending request `uid` (its ResourceInfo carries the uid). */
function pendingExists(uid: string): RpcError {
  const e = alreadyExists(
    ACCESS_REQUEST_TYPE,
    `this identity already has a pending request for this role at this group: ${uid}`,
  );
  return new RpcError(
    e.code,
    e.message,
    e.details.map((d) => (d['@type'].endsWith('ResourceInfo') ? { ...d, resourceName: uid } : d)),
  );
}

/**
 * Who made each root identity, read from the audit trail (see `provenance` below): the
 * actors of the identity's own create and update records, of the create and update records
 * of its current bindings, and, for a binding the identity made itself (an invite redeemed,
 * an identity provider's default role on sign-in), of the invites for that role at that
 * group. Followed upwards through every actor that is an identity; UNION keeps each
 * (root, identity) once, so the walk ends however the records loop. The invite type is
 * spelled into the text (a constant) so that the planner can use the partial index
 * audit_events_invites_created (migration 0026) whatever the plan.
 */
const PROVENANCE = `
  WITH RECURSIVE made(root, uid) AS (
    SELECT r COLLATE "C", r COLLATE "C" FROM unnest(?::text[]) AS r
    UNION
    SELECT m.root, substr(a.actor, 10) COLLATE "C"
      FROM made m
      JOIN LATERAL (
        SELECT e.actor FROM audit_events e
         WHERE e.resource_uid = m.uid AND e.resource_type = ?
           AND e.operation IN ('create', 'update')
        UNION ALL
        SELECT e.actor FROM role_bindings b
          JOIN audit_events e ON e.resource_uid = b.uid
         WHERE b.identity_uid = m.uid AND e.resource_type = ?
           AND e.operation IN ('create', 'update')
        UNION ALL
        SELECT i.actor FROM role_bindings b
          JOIN audit_events e ON e.resource_uid = b.uid
          JOIN audit_events i ON i.resource_parent_uid = b.parent_uid
         WHERE b.identity_uid = m.uid AND e.resource_type = ?
           AND e.operation = 'create' AND e.actor = 'identity:' || m.uid
           AND i.resource_type = '${GROUP_INVITE_TYPE}' AND i.operation = 'create'
           AND (i.after->>'roleUid') = b.role_uid
      ) a ON a.actor LIKE 'identity:%'
  )
  SELECT root, uid FROM made`;

export class KnexAccessRequestStore implements AccessRequestStore {
  async insert(tx: Tx, r: NewAccessRequest): Promise<AccessRequest> {
    const k = kx(tx);
    // The partial unique index access_requests_one_pending (migration 0026) decides; DO
    // NOTHING rather than an error, so the transaction can still read which request holds
    // the place (on PostgreSQL a failed statement would abort it).
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
      .onConflict()
      .ignore()
      .returning(COLUMNS)) as Row[];
    if (row) return toRequest(row);
    const first = (await k(T)
      .where({
        requester_uid: r.requesterUid,
        role_uid: r.roleUid,
        parent_uid: r.parentUid,
        state: 'PENDING',
      })
      .first('uid')) as { uid: string } | undefined;
    if (!first) throw new Error(`access request ${r.uid} conflicted with no pending request`);
    throw pendingExists(first.uid);
  }

  async pendingOf(tx: Tx, requesterUid: string): Promise<AccessRequest[]> {
    const k = kx(tx);
    // A transaction-scoped advisory lock on the requester: its asks are counted in turn,
    // and nothing else (the identity's row, say) is held.
    await k.raw(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [
      `access_requests:pending:${requesterUid}`,
    ]);
    const rows = (await k(T)
      .where({ requester_uid: requesterUid, state: 'PENDING' })
      .orderBy(`${T}.uid`)
      .forUpdate()
      .select(COLUMNS)) as Row[];
    return rows.map(toRequest);
  }

  async provenance(tx: Tx, identityUids: readonly string[]): Promise<Provenance> {
    const out: Provenance = new Map(identityUids.map((u) => [u, new Set<string>()]));
    if (identityUids.length === 0) return out;
    const res = (await kx(tx).raw(PROVENANCE, [
      [...identityUids],
      IDENTITY_TYPE,
      ROLE_BINDING_TYPE,
      ROLE_BINDING_TYPE,
    ])) as { rows: Array<{ root: string; uid: string }> };
    for (const { root, uid } of res.rows) out.get(root)?.add(uid);
    return out;
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
