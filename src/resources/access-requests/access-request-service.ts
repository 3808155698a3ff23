import type { Authorizer } from '../../auth/authorizer.js';
import { systemPrincipal, type Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import {
  failedPrecondition,
  invalidArgument,
  invalidField,
  isRpcError,
  notFound,
  permissionDenied,
  resourceExhausted,
} from '../../core/rpc-error.js';
import { newChildUid } from '../../core/uidp.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { PathBook } from '../names/path-book.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import { canSeeRole } from '../reference-visibility.js';
import { ROLE_BINDING_TYPE } from '../role-bindings/role-binding.js';
import { placementViolations } from '../role-bindings/role-binding-input.js';
import type { RoleBindingStore } from '../role-bindings/role-binding-store.js';
import type { Tx, UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import {
  ACCESS_REQUEST_LIST,
  ACCESS_REQUEST_TYPE,
  ACCESS_REQUEST_UPDATE,
  DEFAULT_TIMEOUT_SECONDS,
  MAX_PENDING_PER_REQUESTER,
  type AccessRequest,
  type Approval,
} from './access-request.js';
import {
  accessRequestCreateSchema,
  decisionSchema,
  policyQuerySchema,
  policySchema,
} from './access-request-input.js';
import { withPaths } from './access-request-paths.js';
import type { AccessRequestStore, RequestPolicy } from './access-request-store.js';

/**
 * The binding an approval would make: the caller must be able to create it directly.
 * `known`: the identity and role are the request's, which the approver may see through the
 * request, so their visibility is not asked again (RoleBindingService.requireCreatable).
 */
export type Bindable = (
  p: Principal,
  t: { groupUid: string; identityUid: string; roleUid: string },
  known?: { identity?: boolean; role?: boolean },
) => Promise<void>;

export interface AccessRequestServiceDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  pager: ListPager;
  requests: AccessRequestStore;
  bindings: RoleBindingStore;
  audit: ChangeRecorder;
  /** The role binding service's own create checks, run without writing (service-layer.ts). */
  bindable: Bindable;
  now?: () => number;
  /** Paths of names beside the uids of answers (absent: uids alone). */
  paths?: PathBook;
}

type Body = Record<string, unknown>;

const ACCESS_REQUEST_POLICY_TYPE = 'iam.arbor.dev/AccessRequestPolicy';
const TIMEOUT = systemPrincipal('access-request-timeout', { door: 'system' });
const BATCH = 100;
/** Approvals that raced with another approval of the same request are evaluated again. */
const ATTEMPTS = 3;
/** Thrown inside an approval's transaction when another approval got there first. */
class StaleApprovals extends Error {}

/**
 * Access requests (docs/access-requests.md): an identity asks for a role at a group for a
 * while; those who could create that binding themselves (`role_bindings.create` there, and
 * every capability of the role) approve or deny; the group's policy says how many distinct
 * approvers it takes. Nobody approves their own request. The final approval makes the
 * expiring binding in the same transaction. A request is visible to its requester and to
 * whoever holds `role_bindings.create` at its group; to anyone else it does not exist.
 */
export class AccessRequestService {
  constructor(private readonly d: AccessRequestServiceDeps) {}

  private now(): number {
    return (this.d.now ?? Date.now)();
  }

  /**
   * Ask for `roleUid` at `groupUid`. The requester is the caller, always.
   * @throws RpcError INVALID_ARGUMENT (malformed, the caller is not an identity, the role
   *   is unknown, invisible or cannot be bound there), NOT_FOUND (a group the caller may
   *   not list).
   */
  async create(p: Principal, groupUid: string | undefined, body: Body): Promise<AccessRequest> {
    if (groupUid === undefined) throw invalidField('parent', 'a group uid is required');
    requireUid(groupUid, 'parent');
    const input = parseInput(
      accessRequestCreateSchema,
      withoutKeys(body, ACCESS_REQUEST_UPDATE.outputOnly),
    );
    if (p.kind !== 'identity')
      throw invalidField('requester', 'only an identity can ask for access; use its API token');
    const requesterUid = p.uid;
    if (!(await this.d.authz.can(p, 'groups.list', groupUid))) throw notFound(GROUP_TYPE, groupUid);
    const placement = placementViolations(groupUid, p.uid, input.roleUid);
    if (placement.length > 0)
      throw invalidArgument(
        placement.map((v) => ({ ...v, field: v.field === 'identityUid' ? 'requester' : v.field })),
      );
    const refs = await this.d.uow.read((tx) =>
      this.d.bindings.refs(tx, groupUid, p.uid, input.roleUid),
    );
    if (!refs.groupExists) throw notFound(GROUP_TYPE, groupUid);
    if (!refs.roleCapabilities || !(await canSeeRole(this.d.authz, p, input.roleUid)))
      throw invalidField('roleUid', 'role not found');
    const made = await this.d.uow.run(async (tx) => {
      await this.boundPending(tx, requesterUid, { groupUid, roleUid: input.roleUid });
      const policy = await this.d.requests.policyAt(tx, groupUid);
      // A second pending ask for the same role here is ALREADY_EXISTS naming the first
      // (the store's unique index decides, whatever the race).
      const made = await this.d.requests.insert(tx, {
        uid: newChildUid(groupUid),
        parentUid: groupUid,
        requesterUid: p.uid,
        roleUid: input.roleUid,
        reason: input.reason,
        durationSeconds: input.durationSeconds,
        ...(input.notBefore ? { notBefore: input.notBefore } : {}),
        approvalsRequired: policy.approvals,
        timeoutSeconds: policy.timeoutSeconds,
      });
      await this.record(tx, p, undefined, made);
      return made;
    });
    return this.named(p, made);
  }

  /** `r` with the paths of its group, requester and role, as far as `p` may see them. */
  private async named(p: Principal, r: AccessRequest): Promise<AccessRequest> {
    const [one] = await withPaths(this.d.paths, p, [r], (x) => this.mayApprove(p, x));
    return one!;
  }

  /** @throws RpcError INVALID_ARGUMENT (malformed uid), NOT_FOUND (missing or not the caller's to see). */
  async get(p: Principal, uid: string): Promise<AccessRequest> {
    requireUid(uid);
    const found = await this.d.uow.replicaRead((tx) => this.d.requests.get(tx, uid));
    if (!found || !(await this.sees(p, found))) throw notFound(ACCESS_REQUEST_TYPE, uid);
    return this.named(p, found);
  }

  /**
   * The requests the caller may see: its own, and those at groups where it holds
   * `role_bindings.create` (an approver's inbox: `?state=PENDING`).
   */
  async list(p: Principal, req: ListRequest): Promise<ListPage<AccessRequest>> {
    const visibility = await this.d.authz.visibility(p, 'role_bindings.create');
    const self = p.kind === 'identity' ? p.uid : undefined;
    const page = await this.d.pager.page(
      ACCESS_REQUEST_LIST,
      req,
      visibility,
      (q) => this.d.uow.replicaRead((tx) => this.d.requests.list(tx, q, self)),
      undefined,
      self === undefined ? '' : `requester:${self}`,
    );
    return {
      ...page,
      items: await withPaths(this.d.paths, p, page.items, (r) => this.mayApprove(p, r)),
    };
  }

  /**
   * One approval. The approver must be able to create the binding itself, now; the N-th
   * distinct approval makes it, expiring `durationSeconds` after it starts. When this
   * approval would be the N-th, every recorded approval is weighed again, as of now: it
   * counts only if its approver could still create the binding, and was not made (created,
   * or bound, directly or through others: `independent`) by the requester or by another
   * approver of this request. Short of N counted approvals, this one is recorded and the
   * request stays PENDING.
   * @throws RpcError NOT_FOUND, PERMISSION_DENIED (own request; cannot create the binding),
   *   FAILED_PRECONDITION (REQUEST_CLOSED, REQUEST_TIMED_OUT, ALREADY_APPROVED),
   *   ALREADY_EXISTS (the requester already holds the role there).
   */
  async approve(p: Principal, body: Body): Promise<AccessRequest> {
    const { uid, reason = '' } = parseInput(decisionSchema, body);
    let r = await this.visible(p, uid);
    if (this.isRequester(p, r)) throw permissionDenied('nobody approves their own request');
    await this.requireBindable(p, r);
    const approver = approverOf(p);
    for (let attempt = 1; ; attempt++) {
      const seen = r.approvals;
      // Only the approval that would complete the request needs the others weighed.
      const counted =
        seen.length + 1 >= r.approvalsRequired && !seen.some((a) => a.approver === approver)
          ? await this.counted(r, [...seen.map((a) => a.approver), approver])
          : undefined;
      try {
        const result = await this.d.uow.run((tx) =>
          this.decide(tx, p, { uid, approver, reason, seen, counted }),
        );
        if (result.granted) this.d.authz.grantsChanged();
        return await this.named(p, result.after);
      } catch (e) {
        if (!(e instanceof StaleApprovals)) throw e;
        if (attempt >= ATTEMPTS) throw staleApprovals(uid);
        r = await this.visible(p, uid);
      }
    }
  }

  /** One approval, under the request's lock, weighed against what was read before it. */
  private async decide(
    tx: Tx,
    p: Principal,
    a: {
      uid: string;
      approver: string;
      reason: string;
      seen: Approval[];
      counted: Set<string> | undefined;
    },
  ): Promise<{ after: AccessRequest; granted: boolean }> {
    const cur = await this.pending(tx, a.uid);
    if (cur.approvals.some((x) => x.approver === a.approver))
      throw failedPrecondition('ALREADY_APPROVED', 'this approver has already approved', a.uid);
    // Another approval landed after the approvals were weighed: weigh them again.
    if (!sameApprovers(cur.approvals, a.seen)) throw new StaleApprovals();
    const now = this.now();
    const approvals = [
      ...cur.approvals,
      { approver: a.approver, time: new Date(now), reason: a.reason },
    ];
    if (a.counted === undefined || a.counted.size < cur.approvalsRequired) {
      const after = await this.d.requests.addApproval(tx, a.uid, approvals);
      await this.record(tx, p, cur, after);
      return { after, granted: false };
    }
    const bindingUid = await this.bind(tx, p, cur, now);
    const after = await this.d.requests.close(tx, a.uid, {
      state: 'APPROVED',
      approvals,
      bindingUid,
    });
    await this.record(tx, p, cur, after, bindingUid);
    return { after, granted: true };
  }

  /**
   * The approvers (`approverOf` names, the last one the caller) whose approval counts now:
   * each could still create the binding itself, and is independent of the requester and of
   * every other approver.
   */
  private async counted(r: AccessRequest, approvers: string[]): Promise<Set<string>> {
    const caller = approvers[approvers.length - 1];
    const able = await Promise.all(
      approvers.map(async (a) => a === caller || (await this.stillBindable(a, r))),
    );
    const identities = approvers.filter((a) => !a.includes(':') && a !== 'admin');
    const made = await this.d.uow.read((tx) => this.d.requests.provenance(tx, identities));
    const out = new Set<string>();
    approvers.forEach((a, i) => {
      if (!able[i]) return;
      const makers = made.get(a);
      // The admin token and Arbor's own components are no identity anyone could mint.
      if (makers === undefined) return void out.add(a);
      const others = [r.requesterUid, ...identities.filter((x) => x !== a)];
      if (!others.some((o) => makers.has(o))) out.add(a);
    });
    return out;
  }

  /** Whether an earlier approver could still create the request's binding, as of now. */
  private async stillBindable(approver: string, r: AccessRequest): Promise<boolean> {
    if (approver === 'admin' || approver.startsWith('system:')) return true;
    try {
      await this.requireBindable({ kind: 'identity', uid: approver }, r);
      return true;
    } catch (e) {
      if (isRpcError(e) && e.code === 7) return false;
      throw e;
    }
  }

  /**
   * Close a pending request as denied: any approver (not the requester; it cancels).
   * @throws RpcError NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION (REQUEST_CLOSED).
   */
  async deny(p: Principal, body: Body): Promise<AccessRequest> {
    const { uid, reason = '' } = parseInput(decisionSchema, body);
    const r = await this.visible(p, uid);
    if (this.isRequester(p, r))
      throw permissionDenied('a requester cancels its own request rather than denying it');
    await this.d.authz.require(p, 'role_bindings.create', r.parentUid, 'groups.list', GROUP_TYPE);
    return this.named(p, await this.closeAs(p, uid, 'DENIED', reason));
  }

  /**
   * The requester withdraws its pending request.
   * @throws RpcError NOT_FOUND, PERMISSION_DENIED (not the requester), FAILED_PRECONDITION.
   */
  async cancel(p: Principal, body: Body): Promise<AccessRequest> {
    const { uid, reason = '' } = parseInput(decisionSchema, body);
    const r = await this.visible(p, uid);
    if (!this.isRequester(p, r)) throw permissionDenied('only the requester cancels a request');
    return this.named(p, await this.closeAs(p, uid, 'CANCELLED', reason));
  }

  /** Close every pending request past its timeout as EXPIRED, each audited; answers how many. */
  async closeTimedOut(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.d.uow.run(async (tx) => {
        const due = await this.d.requests.timedOut(tx, BATCH);
        for (const r of due) {
          const after = await this.d.requests.close(tx, r.uid, { state: 'EXPIRED' });
          await this.record(tx, TIMEOUT, r, after);
        }
        return due.length;
      });
      total += n;
      if (n < BATCH) return total;
    }
  }

  /** The policy in force at a group. @throws RpcError NOT_FOUND (a group the caller may not list). */
  async policy(p: Principal, body: Body): Promise<RequestPolicy> {
    const { groupUid } = parseInput(policyQuerySchema, body);
    await this.d.authz.require(p, 'groups.list', groupUid, 'groups.list', GROUP_TYPE);
    return this.d.uow.read((tx) => this.d.requests.policyAt(tx, groupUid));
  }

  /**
   * Set a group's policy (inherited below it); applies to requests made from now on. The
   * policy decides how bindings are made there, so setting it takes both `groups.update`
   * and `role_bindings.create` at the group: whoever may not bind there may not lower (or
   * raise) how many of those who may must agree.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (a group the caller may not list),
   *   PERMISSION_DENIED (either capability missing).
   */
  async setPolicy(p: Principal, body: Body): Promise<RequestPolicy> {
    const { groupUid, ...input } = parseInput(policySchema, body);
    await this.d.authz.require(p, 'groups.update', groupUid, 'groups.list', GROUP_TYPE);
    await this.d.authz.require(p, 'role_bindings.create', groupUid, 'groups.list', GROUP_TYPE);
    const next = {
      approvals: input.approvals,
      timeoutSeconds: input.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    };
    return this.d.uow.run(async (tx) => {
      const before = await this.d.requests.policyAt(tx, groupUid);
      await this.d.requests.setPolicy(tx, groupUid, next);
      const after = { ...next, groupUid };
      await this.d.audit.record(tx, p, {
        type: ACCESS_REQUEST_POLICY_TYPE,
        operation: 'update',
        uid: groupUid,
        before,
        after,
      });
      return after;
    });
  }

  /**
   * Bound what one requester may have pending: its timed-out requests are closed as EXPIRED
   * first (they hold no place), then more than MAX_PENDING_PER_REQUESTER is refused, unless
   * this ask repeats a pending one (then the store's ALREADY_EXISTS says which).
   * @throws RpcError RESOURCE_EXHAUSTED.
   */
  private async boundPending(
    tx: Tx,
    requesterUid: string,
    ask: { groupUid: string; roleUid: string },
  ): Promise<void> {
    const now = this.now();
    const live: AccessRequest[] = [];
    for (const r of await this.d.requests.pendingOf(tx, requesterUid)) {
      if (r.timeoutTime.getTime() > now) {
        live.push(r);
        continue;
      }
      const after = await this.d.requests.close(tx, r.uid, { state: 'EXPIRED' });
      await this.record(tx, TIMEOUT, r, after);
    }
    const repeat = live.some((r) => r.parentUid === ask.groupUid && r.roleUid === ask.roleUid);
    if (!repeat && live.length >= MAX_PENDING_PER_REQUESTER)
      throw resourceExhausted(
        `an identity may have at most ${MAX_PENDING_PER_REQUESTER} pending access requests; ` +
          'cancel one or wait for a decision',
      );
  }

  private async closeAs(
    p: Principal,
    uid: string,
    state: 'DENIED' | 'CANCELLED',
    reason: string,
  ): Promise<AccessRequest> {
    return this.d.uow.run(async (tx) => {
      const cur = await this.pending(tx, uid);
      const after = await this.d.requests.close(tx, uid, {
        state,
        closedBy: approverOf(p),
        closeReason: reason,
      });
      await this.record(tx, p, cur, after);
      return after;
    });
  }

  /** The request locked, still pending and not timed out. */
  private async pending(tx: Tx, uid: string): Promise<AccessRequest> {
    const cur = await this.d.requests.lock(tx, uid);
    if (!cur) throw notFound(ACCESS_REQUEST_TYPE, uid);
    if (cur.state !== 'PENDING')
      throw failedPrecondition('REQUEST_CLOSED', `the request is ${cur.state.toLowerCase()}`, uid);
    if (cur.timeoutTime.getTime() <= this.now())
      throw failedPrecondition('REQUEST_TIMED_OUT', 'the request has timed out', uid);
    return cur;
  }

  /** Make the request's binding as the approver, in the approving transaction. */
  private async bind(tx: Tx, p: Principal, r: AccessRequest, now: number): Promise<string> {
    const start = r.notBefore && r.notBefore.getTime() > now ? r.notBefore : undefined;
    const binding = await this.d.bindings.insert(tx, {
      uid: newChildUid(r.parentUid),
      parentUid: r.parentUid,
      identityUid: r.requesterUid,
      roleUid: r.roleUid,
      expireTime: new Date((start?.getTime() ?? now) + r.durationSeconds * 1000),
      ...(start ? { notBefore: start } : {}),
    });
    await this.d.audit.record(tx, p, {
      type: ROLE_BINDING_TYPE,
      operation: 'create',
      uid: binding.uid,
      after: binding,
    });
    return binding.uid;
  }

  /** An approver must be able to create the binding itself: anything less is a refusal. */
  private async requireBindable(p: Principal, r: AccessRequest): Promise<void> {
    try {
      // The requester and the role are the request's: whoever may decide it sees them
      // through it (a folder's owner deciding for an identity that lives at the
      // organization), so only their existence and the approver's own rights are asked.
      await this.d.bindable(
        p,
        { groupUid: r.parentUid, identityUid: r.requesterUid, roleUid: r.roleUid },
        { identity: true, role: true },
      );
    } catch (e) {
      if (isRpcError(e) && (e.code === 3 || e.code === 5 || e.code === 7))
        throw permissionDenied(`an approver must be able to create this binding: ${e.message}`);
      throw e;
    }
  }

  /**
   * Whether `p` passes the approve call's own check for `r` (not its requester; could create
   * the binding), which is what entitles it to the requester's and role's names.
   */
  private async mayApprove(p: Principal, r: AccessRequest): Promise<boolean> {
    if (this.isRequester(p, r)) return false;
    try {
      await this.requireBindable(p, r);
      return true;
    } catch (e) {
      if (isRpcError(e)) return false;
      throw e;
    }
  }

  private async visible(p: Principal, uid: string): Promise<AccessRequest> {
    requireUid(uid);
    const found = await this.d.uow.read((tx) => this.d.requests.get(tx, uid));
    if (!found || !(await this.sees(p, found))) throw notFound(ACCESS_REQUEST_TYPE, uid);
    return found;
  }

  private isRequester(p: Principal, r: AccessRequest): boolean {
    return p.kind === 'identity' && p.uid === r.requesterUid;
  }

  private async sees(p: Principal, r: AccessRequest): Promise<boolean> {
    return this.isRequester(p, r) || (await this.d.authz.can(p, 'role_bindings.create', r.uid));
  }

  private record(
    tx: Tx,
    p: Principal,
    before: AccessRequest | undefined,
    after: AccessRequest,
    bindingUid?: string,
  ): Promise<void> {
    return this.d.audit.record(tx, p, {
      type: ACCESS_REQUEST_TYPE,
      operation: before ? 'update' : 'create',
      uid: after.uid,
      ...(before ? { before } : {}),
      after,
      ...(bindingUid
        ? {
            cascaded: [
              { resourceType: ROLE_BINDING_TYPE, resourceUid: bindingUid, operation: 'create' },
            ],
          }
        : {}),
    });
  }
}

/** Whether two approval lists name the same approvers in the same order. */
function sameApprovers(a: Approval[], b: Approval[]): boolean {
  return a.length === b.length && a.every((x, i) => x.approver === b[i]?.approver);
}

/** Approvals kept racing with others past every attempt: the caller may simply retry. */
function staleApprovals(uid: string) {
  return failedPrecondition(
    'APPROVALS_CHANGED',
    'other approvals were given meanwhile; approve again',
    uid,
  );
}

/** How an approval or a close names its actor: the identity's uid, or the admin token. */
function approverOf(p: Principal): string {
  return p.kind === 'identity' ? p.uid : p.kind === 'admin' ? 'admin' : `system:${p.name}`;
}
