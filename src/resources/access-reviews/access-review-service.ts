import type { Authorizer } from '../../auth/authorizer.js';
import { systemPrincipal, type Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import {
  failedPrecondition,
  invalidField,
  notFound,
  permissionDenied,
} from '../../core/rpc-error.js';
import { newChildUid, parentOf } from '../../core/uidp.js';
import type { ChangeCause } from '../audit/audit-event.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { ManagedGuard } from '../managed/managed-guard.js';
import type { PathBook } from '../names/path-book.js';
import { itemsWithPaths } from './access-review-paths.js';
import { revokeBindings } from '../role-bindings/revoke-bindings.js';
import { ROLE_BINDING_TYPE, type RoleBinding } from '../role-bindings/role-binding.js';
import { requireBindingDeletable } from '../role-bindings/role-binding-service.js';
import type { RoleBindingStore } from '../role-bindings/role-binding-store.js';
import type { Tx, UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import {
  ACCESS_REVIEW_ITEM_LIST,
  ACCESS_REVIEW_ITEM_TYPE,
  ACCESS_REVIEW_LIST,
  ACCESS_REVIEW_SCHEDULE_TYPE,
  ACCESS_REVIEW_TYPE,
  ACCESS_REVIEW_UPDATE,
  MAX_DUE_DAYS,
  MAX_OPEN_PER_GROUP,
  MAX_REVIEW_ITEMS,
  UNUSED_WINDOW_DAYS,
  type AccessReview,
  type AccessReviewItem,
  type ReviewDefault,
  type ReviewSchedule,
} from './access-review.js';
import {
  reviewDecideSchema,
  reviewOpenSchema,
  scheduleQuerySchema,
  scheduleSetSchema,
} from './access-review-input.js';
import type { AccessReviewStore } from './access-review-store.js';

/** The role binding service's own update checks, run without writing (service-layer.ts). */
export type Updatable = (
  p: Principal,
  uid: string,
  patch: { expireTime: Date },
) => Promise<{ cur: RoleBinding }>;

export interface AccessReviewServiceDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  pager: ListPager;
  reviews: AccessReviewStore;
  bindings: RoleBindingStore;
  audit: ChangeRecorder;
  managed?: ManagedGuard;
  updatable: Updatable;
  /** Paths of names beside the uids of items; absent: items as they are. */
  paths?: PathBook;
  now?: () => number;
}

type Body = Record<string, unknown>;

const DAY_MS = 86_400_000;
const DEFAULTS = systemPrincipal('access-review-default', { door: 'system' });
const SCHEDULE = systemPrincipal('access-review-schedule', { door: 'system' });

/**
 * Access reviews (docs/access-reviews.md). Whoever may manage the role bindings at a group
 * (`role_bindings.update` and `role_bindings.delete` there) opens a review of the bindings
 * at and below it, due by a date, with a default for what is left undecided then. Each item
 * is kept, shortened or removed, with a reason, by someone who could make that very change
 * to the binding directly (the role binding service's own checks), never by its holder.
 * A review is visible to whoever may list its group; its items only where the caller may
 * list the bindings.
 */
export class AccessReviewService {
  constructor(private readonly d: AccessReviewServiceDeps) {}

  private now(): number {
    return (this.d.now ?? Date.now)();
  }

  /**
   * Open a review of the live bindings at and below `groupUid`.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (a group the caller may not list),
   *   PERMISSION_DENIED (no role_bindings.update or .delete there), RESOURCE_EXHAUSTED
   *   (MAX_OPEN_PER_GROUP open already), FAILED_PRECONDITION (REVIEW_TOO_LARGE: more than
   *   MAX_REVIEW_ITEMS bindings in scope).
   */
  async open(p: Principal, groupUid: string | undefined, body: Body): Promise<AccessReview> {
    if (groupUid === undefined) throw invalidField('parent', 'a group uid is required');
    requireUid(groupUid, 'parent');
    const input = parseInput(reviewOpenSchema, withoutKeys(body, ACCESS_REVIEW_UPDATE.outputOnly));
    await this.requireOwner(p, groupUid);
    return this.d.uow.run(async (tx) => {
      const r = await this.openIn(tx, p, groupUid, input.dueTime, input.defaultDecision);
      if (typeof r === 'string') throw tooMany(r, groupUid);
      return r;
    });
  }

  /** @throws RpcError INVALID_ARGUMENT (malformed uid), NOT_FOUND (missing or invisible). */
  async get(p: Principal, uid: string): Promise<AccessReview> {
    requireUid(uid);
    // Decided on the uid before any read: the review hangs under its group.
    if (!(await this.d.authz.can(p, 'groups.list', uid))) throw notFound(ACCESS_REVIEW_TYPE, uid);
    const found = await this.d.uow.read((tx) => this.d.reviews.get(tx, uid));
    if (!found) throw notFound(ACCESS_REVIEW_TYPE, uid);
    return found;
  }

  /** The reviews of the groups the caller may list. */
  async list(p: Principal, req: ListRequest): Promise<ListPage<AccessReview>> {
    const visibility = await this.d.authz.visibility(p, 'groups.list');
    return this.d.pager.page(ACCESS_REVIEW_LIST, req, visibility, (q) =>
      this.d.uow.read((tx) => this.d.reviews.list(tx, q)),
    );
  }

  /**
   * A review's items (`review` filter required), only those whose binding the caller may
   * list (`role_bindings.list`).
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (the review missing or invisible).
   */
  async listItems(p: Principal, req: ListRequest): Promise<ListPage<AccessReviewItem>> {
    const review = req.filters.review;
    if (review === undefined) throw invalidField('review', 'a review uid is required');
    if (req.uidp.descendantsOf !== undefined || req.uidp.childrenOf !== undefined)
      throw invalidField('uidp', 'items are listed by review');
    await this.get(p, review);
    const bindings = await this.d.authz.visibility(p, 'role_bindings.list');
    const page = await this.d.pager.page(
      ACCESS_REVIEW_ITEM_LIST,
      req,
      { kind: 'all' },
      (q) => this.d.uow.read((tx) => this.d.reviews.listItems(tx, q, bindings)),
      undefined,
      JSON.stringify(bindings),
    );
    return { ...page, items: await itemsWithPaths(this.d.paths, p, page.items) };
  }

  /**
   * Decide one item, applying it to the binding in the same transaction: `keep` (nothing
   * changes), `shorten` (expiry brought forward, as PATCH of the binding), `remove` (as its
   * DELETE). The decider must be able to make that change directly, now.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (item, review or binding invisible),
   *   PERMISSION_DENIED (own binding; the binding change refused),
   *   FAILED_PRECONDITION (REVIEW_CLOSED, REVIEW_PAST_DUE, ALREADY_DECIDED, BINDING_GONE,
   *   MANAGED_BY_KUBERNETES).
   */
  async decide(p: Principal, body: Body): Promise<AccessReviewItem> {
    const input = parseInput(reviewDecideSchema, body);
    const itemUid = input.itemUid;
    const reviewUid = parentOf(itemUid);
    if (reviewUid === undefined || parentOf(reviewUid) === undefined)
      throw invalidField('itemUid', 'must be the uid of a review item');
    // The review's group first, then the binding: an item of a review or binding the caller
    // may not see does not exist for it.
    if (!(await this.d.authz.can(p, 'groups.list', reviewUid)))
      throw notFound(ACCESS_REVIEW_ITEM_TYPE, itemUid);
    const item = await this.d.uow.read((tx) => this.d.reviews.getItem(tx, itemUid));
    if (!item || !(await this.d.authz.can(p, 'role_bindings.list', item.bindingUid)))
      throw notFound(ACCESS_REVIEW_ITEM_TYPE, itemUid);
    if (p.kind === 'identity' && p.uid === item.holder.uid)
      throw permissionDenied('nobody reviews their own access');
    const cause: ChangeCause = {
      reason: 'ACCESS_REVIEW',
      resourceType: ACCESS_REVIEW_ITEM_TYPE,
      resourceUid: itemUid,
    };
    // The binding service's own checks, before the write (and `remove`'s again inside it).
    if (input.decision === 'keep')
      await this.d.authz.require(
        p,
        'role_bindings.update',
        item.bindingUid,
        'role_bindings.list',
        ROLE_BINDING_TYPE,
      );
    else if (input.decision === 'shorten')
      await this.d.updatable(p, item.bindingUid, { expireTime: input.expireTime! });
    else
      await this.d.authz.require(
        p,
        'role_bindings.delete',
        item.bindingUid,
        'role_bindings.list',
        ROLE_BINDING_TYPE,
      );
    const write = this.d.uow.run(async (tx) => {
      const locked = await this.d.reviews.lockItem(tx, itemUid);
      if (!locked) throw notFound(ACCESS_REVIEW_ITEM_TYPE, itemUid);
      this.requireOpen(locked.review, locked.item);
      const binding = await this.d.bindings.get(tx, item.bindingUid);
      if (!binding && input.decision !== 'keep')
        throw failedPrecondition('BINDING_GONE', 'the binding no longer exists', item.bindingUid);
      if (binding && input.decision === 'shorten') {
        await this.d.managed?.beforeWrite(tx, 'role_bindings', binding.uid, p);
        const after = await this.d.bindings.update(tx, binding.uid, {
          identityUid: binding.identity.uid,
          roleUid: binding.role.uid,
          expireTime: input.expireTime!,
        });
        if (!after) throw failedPrecondition('BINDING_GONE', 'the binding no longer exists');
        await this.d.audit.record(tx, p, {
          type: ROLE_BINDING_TYPE,
          operation: 'update',
          uid: binding.uid,
          before: binding,
          after,
          cause,
        });
      } else if (binding && input.decision === 'remove') {
        await requireBindingDeletable(this.d.authz, p, {
          uid: binding.uid,
          managedBy: (await this.d.managed?.managerOf(tx, 'role_bindings', binding.uid)) ?? null,
        });
        await this.d.managed?.beforeWrite(tx, 'role_bindings', binding.uid, p);
        await revokeBindings(tx, this.d, p, [binding], cause);
      }
      const review = await this.d.reviews.decide(tx, itemUid, {
        decision: input.decision,
        ...(input.expireTime ? { decisionExpireTime: input.expireTime } : {}),
        reason: input.reason,
        decidedBy: actorOf(p),
        at: new Date(this.now()),
      });
      const after = (await this.d.reviews.getItem(tx, itemUid))!;
      await this.d.audit.record(tx, p, {
        type: ACCESS_REVIEW_ITEM_TYPE,
        operation: 'update',
        uid: itemUid,
        before: locked.item,
        after,
        ...(binding && input.decision !== 'keep'
          ? {
              cascaded: [
                {
                  resourceType: ROLE_BINDING_TYPE,
                  resourceUid: binding.uid,
                  operation: input.decision === 'remove' ? 'delete' : 'update',
                },
              ],
            }
          : {}),
      });
      if (review.state !== locked.review.state)
        await this.recordReview(tx, p, locked.review, review);
      return after;
    });
    const decided = await (input.decision === 'keep' ? write : this.d.authz.changingGrants(write));
    return (await itemsWithPaths(this.d.paths, p, [decided]))[0]!;
  }

  /**
   * The background work, once, as of `now`: every open review past its due time gets its
   * default, then every schedule due opens its next review. Safe on every replica at once
   * (the store claims rows under SKIP LOCKED). @returns how many reviews were defaulted
   * and opened.
   */
  async tick(now = this.now()): Promise<{ defaulted: number; opened: number }> {
    let defaulted = 0;
    // One review per transaction: a review holds at most MAX_REVIEW_ITEMS bindings.
    while (await this.d.uow.run((tx) => this.defaultOne(tx, new Date(now)))) defaulted++;
    if (defaulted > 0) this.d.authz.grantsChanged();
    let opened = 0;
    for (;;) {
      const r = await this.d.uow.run((tx) => this.openScheduled(tx, new Date(now)));
      if (r === undefined) break;
      if (r) opened++;
    }
    return { defaulted, opened };
  }

  /** The schedule of a group. @throws RpcError NOT_FOUND (group invisible, or no schedule). */
  async schedule(p: Principal, body: Body): Promise<ReviewSchedule> {
    const { groupUid } = parseInput(scheduleQuerySchema, body);
    await this.d.authz.require(p, 'groups.list', groupUid, 'groups.list', GROUP_TYPE);
    const s = await this.d.uow.read((tx) => this.d.reviews.getSchedule(tx, groupUid));
    if (!s) throw notFound(ACCESS_REVIEW_SCHEDULE_TYPE, groupUid);
    return s;
  }

  /**
   * Set (or, with `everyDays: 0`, remove) a group's recurring review; its first review opens
   * at the worker's next beat. Takes what opening one takes.
   * @returns the schedule, or undefined when removed.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED.
   */
  async setSchedule(p: Principal, body: Body): Promise<ReviewSchedule | undefined> {
    const input = parseInput(scheduleSetSchema, body);
    await this.requireOwner(p, input.groupUid);
    return this.d.uow.run(async (tx) => {
      const before = await this.d.reviews.getSchedule(tx, input.groupUid);
      if (input.everyDays === 0) {
        if (!(await this.d.reviews.deleteSchedule(tx, input.groupUid)))
          throw notFound(ACCESS_REVIEW_SCHEDULE_TYPE, input.groupUid);
        await this.d.audit.record(tx, p, {
          type: ACCESS_REVIEW_SCHEDULE_TYPE,
          operation: 'delete',
          uid: input.groupUid,
          before,
        });
        return undefined;
      }
      const after: ReviewSchedule = {
        groupUid: input.groupUid,
        everyDays: input.everyDays,
        dueInDays: input.dueInDays ?? Math.min(14, input.everyDays),
        defaultDecision: input.defaultDecision ?? 'keep',
        nextOpenTime: new Date(this.now()),
        setBy: actorOf(p),
      };
      // The group's foreign key answers NOT_FOUND for a group deleted meanwhile.
      await this.d.reviews.setSchedule(tx, after);
      await this.d.audit.record(tx, p, {
        type: ACCESS_REVIEW_SCHEDULE_TYPE,
        operation: before ? 'update' : 'create',
        uid: input.groupUid,
        ...(before ? { before } : {}),
        after,
      });
      return after;
    });
  }

  /** Whoever opens a review (or schedules them) may manage the bindings at the group. */
  private async requireOwner(p: Principal, groupUid: string): Promise<void> {
    await this.d.authz.require(p, 'role_bindings.update', groupUid, 'groups.list', GROUP_TYPE);
    await this.d.authz.require(p, 'role_bindings.delete', groupUid, 'groups.list', GROUP_TYPE);
  }

  /**
   * Open a review in `tx`; the reason as a word when one of the bounds refuses it (the
   * worker skips such a schedule's turn rather than failing its transaction).
   */
  private async openIn(
    tx: Tx,
    p: Principal,
    groupUid: string,
    dueTime: Date,
    defaultDecision: ReviewDefault,
  ): Promise<AccessReview | 'open' | 'large'> {
    if ((await this.d.reviews.openAt(tx, groupUid)) >= MAX_OPEN_PER_GROUP) return 'open';
    const now = this.now();
    const items = await this.d.reviews.bindingsIn(tx, groupUid, {
      now: new Date(now),
      unusedBefore: new Date(now - UNUSED_WINDOW_DAYS * DAY_MS),
      limit: MAX_REVIEW_ITEMS + 1,
    });
    if (items.length > MAX_REVIEW_ITEMS) return 'large';
    const made = await this.d.reviews.insert(
      tx,
      {
        uid: newChildUid(groupUid),
        parentUid: groupUid,
        dueTime,
        defaultDecision,
        openedBy: actorOf(p),
      },
      items,
    );
    await this.recordReview(tx, p, undefined, made);
    return made;
  }

  /** Default one claimed review; false when none is due. */
  private async defaultOne(tx: Tx, now: Date): Promise<boolean> {
    const [review] = await this.d.reviews.claimDue(tx, now, 1);
    if (!review) return false;
    const rest = await this.d.reviews.undecided(tx, review.uid);
    if (review.defaultDecision === 'expire') {
      for (const item of rest) await this.expire(tx, item, now);
    }
    await this.d.reviews.decideRest(tx, review.uid, {
      decision: review.defaultDecision === 'expire' ? 'shorten' : 'keep',
      ...(review.defaultDecision === 'expire' ? { decisionExpireTime: now } : {}),
      reason: `the review's default (${review.defaultDecision}) at its due time`,
      decidedBy: actorOf(DEFAULTS),
      at: now,
    });
    const after = (await this.d.reviews.get(tx, review.uid))!;
    await this.d.audit.record(tx, DEFAULTS, {
      type: ACCESS_REVIEW_TYPE,
      operation: 'update',
      uid: review.uid,
      before: { ...after, state: 'OPEN', decidedCount: after.decidedCount - rest.length },
      after,
    });
    return true;
  }

  /**
   * The `expire` default on one binding: its expiry brought to now (one that has not started
   * yet is removed: its window would be empty). A binding a Kubernetes object manages is
   * left to that object, as any write through the API would be refused.
   */
  private async expire(tx: Tx, item: AccessReviewItem, now: Date): Promise<void> {
    const b = await this.d.bindings.get(tx, item.bindingUid);
    if (!b || (b.expireTime && b.expireTime <= now)) return;
    if ((await this.d.managed?.managerOf(tx, 'role_bindings', b.uid)) ?? null) return;
    const cause: ChangeCause = {
      reason: 'ACCESS_REVIEW',
      resourceType: ACCESS_REVIEW_ITEM_TYPE,
      resourceUid: item.uid,
    };
    if (b.notBefore && b.notBefore >= now) {
      await revokeBindings(tx, this.d, DEFAULTS, [b], cause);
      return;
    }
    const after = await this.d.bindings.update(tx, b.uid, {
      identityUid: b.identity.uid,
      roleUid: b.role.uid,
      expireTime: now,
    });
    await this.d.audit.record(tx, DEFAULTS, {
      type: ROLE_BINDING_TYPE,
      operation: 'update',
      uid: b.uid,
      before: b,
      after,
      cause,
    });
  }

  /** Open the next review of one due schedule; undefined when none is due. */
  private async openScheduled(tx: Tx, now: Date): Promise<boolean | undefined> {
    const [s] = await this.d.reviews.claimSchedules(tx, now, 1);
    if (!s) return undefined;
    const due = new Date(now.getTime() + Math.min(s.dueInDays, MAX_DUE_DAYS) * DAY_MS);
    const r = await this.openIn(tx, SCHEDULE, s.groupUid, due, s.defaultDecision);
    // Too many open, or too large: this turn is skipped (docs/access-reviews.md).
    return typeof r !== 'string';
  }

  private requireOpen(r: AccessReview, item: AccessReviewItem): void {
    if (r.state !== 'OPEN')
      throw failedPrecondition('REVIEW_CLOSED', `the review is ${r.state.toLowerCase()}`, r.uid);
    if (r.dueTime.getTime() <= this.now())
      throw failedPrecondition('REVIEW_PAST_DUE', 'the review is past its due time', r.uid);
    if (item.decision !== undefined)
      throw failedPrecondition('ALREADY_DECIDED', 'the item is decided already', item.uid);
  }

  private recordReview(
    tx: Tx,
    p: Principal,
    before: AccessReview | undefined,
    after: AccessReview,
  ): Promise<void> {
    return this.d.audit.record(tx, p, {
      type: ACCESS_REVIEW_TYPE,
      operation: before ? 'update' : 'create',
      uid: after.uid,
      ...(before ? { before } : {}),
      after,
    });
  }
}

function tooMany(why: 'open' | 'large', groupUid: string) {
  return why === 'open'
    ? failedPrecondition(
        'TOO_MANY_OPEN_REVIEWS',
        `a group may have at most ${MAX_OPEN_PER_GROUP} open reviews`,
        groupUid,
      )
    : failedPrecondition(
        'REVIEW_TOO_LARGE',
        `more than ${MAX_REVIEW_ITEMS} role bindings at and below this group; review a group below it`,
        groupUid,
      );
}

/** How a decision names its actor: the identity's uid, `admin`, or `system:<name>`. */
function actorOf(p: Principal): string {
  return p.kind === 'identity' ? p.uid : p.kind === 'admin' ? 'admin' : `system:${p.name}`;
}
