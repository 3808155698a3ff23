import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound } from '../../core/rpc-error.js';
import { newChildUid } from '../../core/uidp.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import { sinkPolicyViolation } from '../../outbound/sink-address-policy.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import {
  SUBSCRIPTION_LIST,
  SUBSCRIPTION_TYPE,
  SUBSCRIPTION_UPDATE,
  type Subscription,
} from './subscription.js';
import { subscriptionCreateSchema, subscriptionPatchSchema } from './subscription-input.js';
import type { SubscriptionStore } from './subscription-store.js';

export interface SubscriptionServiceDeps {
  uow: UnitOfWork;
  subscriptions: SubscriptionStore;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
  /** ARBOR_ALLOW_PRIVATE_SINKS: http and private/loopback sinks (development, tests). */
  allowPrivateSinks: boolean;
}

/** Event subscriptions under groups: the usual CRUD and list contract. */
export class SubscriptionService {
  constructor(private readonly d: SubscriptionServiceDeps) {}

  /** @throws RpcError INVALID_ARGUMENT (sink outside the address policy). */
  private checkSink(sink: string | undefined): void {
    if (sink === undefined) return;
    const why = sinkPolicyViolation(sink, this.d.allowPrivateSinks);
    if (why) throw invalidField('sink', why);
  }

  /**
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (group), PERMISSION_DENIED (also without
   *   `audit.list` at the group: events carry the audit trail),
   *   ALREADY_EXISTS (a subscription of that name is already in the group).
   */
  async create(
    p: Principal,
    groupUid: string | undefined,
    body: Record<string, unknown>,
  ): Promise<Subscription> {
    const parent = requireUid(groupUid ?? '', 'parent');
    const input = parseInput(
      subscriptionCreateSchema,
      withoutKeys(body, SUBSCRIPTION_UPDATE.outputOnly),
    );
    this.checkSink(input.sink);
    await this.d.authz.require(p, 'subscriptions.create', parent, 'groups.list', GROUP_TYPE);
    // Events carry what the audit trail holds: whoever points a sink at a subtree must be
    // allowed to read that subtree's audit trail.
    await this.d.authz.require(p, 'audit.list', parent, 'groups.list', GROUP_TYPE);
    return this.d.uow.run(async (tx) => {
      const s = await this.d.subscriptions.insert(tx, {
        uid: newChildUid(parent),
        parentUid: parent,
        name: input.name,
        description: input.description ?? '',
        sink: input.sink,
        types: input.types ?? [],
      });
      await this.d.audit.record(tx, p, {
        type: SUBSCRIPTION_TYPE,
        operation: 'create',
        uid: s.uid,
        after: s,
      });
      return s;
    });
  }

  /** @throws RpcError INVALID_ARGUMENT, NOT_FOUND when missing or invisible. */
  async get(p: Principal, uid: string): Promise<Subscription> {
    requireUid(uid);
    const T = SUBSCRIPTION_TYPE;
    await this.d.authz.require(p, 'subscriptions.list', uid, 'subscriptions.list', T);
    const s = await this.d.uow.replicaRead((tx) => this.d.subscriptions.get(tx, uid));
    if (!s) throw notFound(T, uid);
    return s;
  }

  /** @throws RpcError INVALID_ARGUMENT (page token, filters). */
  async list(p: Principal, req: ListRequest): Promise<ListPage<Subscription>> {
    const visibility = await this.d.authz.visibility(p, 'subscriptions.list');
    return this.d.pager.page(SUBSCRIPTION_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.subscriptions.list(tx, q)),
    );
  }

  /**
   * Field-mask update of name, description, sink and types. Any update of a dead-lettered
   * subscription resumes delivery from the event it stopped at.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, ALREADY_EXISTS.
   */
  async update(
    p: Principal,
    uid: string,
    body: Record<string, unknown>,
    updateMask: string | string[] | undefined,
  ): Promise<Subscription> {
    requireUid(uid);
    const patch = parseInput(
      subscriptionPatchSchema,
      resolvePatch(body, parseMask(updateMask), SUBSCRIPTION_UPDATE),
    );
    if (patch.sink === '') throw invalidField('sink', 'sink is required');
    this.checkSink(patch.sink);
    const T = SUBSCRIPTION_TYPE;
    await this.d.authz.require(p, 'subscriptions.update', uid, 'subscriptions.list', T);
    await this.d.authz.require(p, 'audit.list', uid, 'subscriptions.list', T);
    return this.d.uow.run(async (tx) => {
      const before = await this.d.subscriptions.get(tx, uid);
      const s = await this.d.subscriptions.update(tx, uid, patch);
      if (!s || !before) throw notFound(T, uid);
      await this.d.audit.record(tx, p, { type: T, operation: 'update', uid, before, after: s });
      return s;
    });
  }

  /** Deleting a subscription drops what was still queued for it. @throws RpcError NOT_FOUND. */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    const T = SUBSCRIPTION_TYPE;
    await this.d.authz.require(p, 'subscriptions.delete', uid, 'subscriptions.list', T);
    await this.d.uow.run(async (tx) => {
      const before = await this.d.subscriptions.get(tx, uid);
      if (!before || !(await this.d.subscriptions.delete(tx, uid))) throw notFound(T, uid);
      await this.d.audit.record(tx, p, { type: T, operation: 'delete', uid, before });
    });
  }
}
