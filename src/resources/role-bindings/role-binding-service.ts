import type { Authorizer } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import { compileCondition, ConditionError } from '../../auth/condition.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import {
  invalidArgument,
  invalidField,
  notFound,
  type FieldViolation,
} from '../../core/rpc-error.js';
import { newChildUid } from '../../core/uidp.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import { canSeeIdentity, canSeeRole, visibleBinding } from '../reference-visibility.js';
import { requireHeld } from '../roles/grant-guard.js';
import { requireUnmanaged, type ManagedGuard } from '../managed/managed-guard.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import {
  ROLE_BINDING_LIST,
  ROLE_BINDING_TYPE,
  ROLE_BINDING_UPDATE,
  type RoleBinding,
} from './role-binding.js';
import {
  placementViolations,
  roleBindingCreateSchema,
  roleBindingPatchSchema,
} from './role-binding-input.js';
import type { BoundWithin, RoleBindingStore } from './role-binding-store.js';
import { revokeBindings } from './revoke-bindings.js';

export interface RoleBindingServiceDeps {
  uow: UnitOfWork;
  bindings: RoleBindingStore;
  authz: Authorizer;
  pager: ListPager;
  /** Refuses writes to rows a custom resource manages (migration 0008); absent: no check. */
  managed?: ManagedGuard;
  audit: ChangeRecorder;
}

interface Target {
  groupUid: string;
  identityUid: string;
  roleUid: string;
}

/** References the caller learnt of through what it decides (see `requireCreatable`). */
export interface KnownRefs {
  identity?: boolean;
  role?: boolean;
}

/** What a binding's create decides on, once its references are found and visible. */
export interface BindingCreateFacts {
  groupUid: string;
  /** The capabilities of the role bound, as they are at that point. */
  roleCapabilities: readonly Capability[];
  expireTime?: Date;
  /** The instant the decision is made at (epoch ms). */
  now: number;
}

/**
 * The dry run of a binding's create, past its references: `create` (through
 * `requireCreatable`) and access:simulate both decide by it, so a simulated verdict is the
 * real call's. A past expiry is refused to everyone, the admin token too.
 * @throws RpcError INVALID_ARGUMENT (expireTime not in the future), NOT_FOUND (group not
 *   visible), PERMISSION_DENIED (no role_bindings.create, or the role grants what the caller
 *   does not hold there).
 */
export async function requireBindingCreatable(
  authz: Authorizer,
  p: Principal,
  f: BindingCreateFacts,
): Promise<void> {
  if (f.expireTime !== undefined && f.expireTime.getTime() <= f.now)
    throw invalidField('expireTime', 'expireTime must be in the future');
  await authz.require(p, 'role_bindings.create', f.groupUid, 'groups.list', GROUP_TYPE);
  await requireHeld(authz, p, f.roleCapabilities, f.groupUid);
}

/** What a binding's delete decides on. */
export interface BindingDeleteFacts {
  uid: string;
  /** The Kubernetes object managing it (`managed_by`), null when none. */
  managedBy: string | null;
}

/**
 * The dry run of a binding's delete: `delete` decides by it inside its transaction, on the
 * marker read there, and access:simulate on the marker its snapshot read.
 * @throws RpcError NOT_FOUND (not visible), PERMISSION_DENIED (no role_bindings.delete),
 *   FAILED_PRECONDITION (MANAGED_BY_KUBERNETES: another manages it).
 */
export async function requireBindingDeletable(
  authz: Authorizer,
  p: Principal,
  f: BindingDeleteFacts,
): Promise<void> {
  await authz.require(p, 'role_bindings.delete', f.uid, 'role_bindings.list', ROLE_BINDING_TYPE);
  requireUnmanaged(f.managedBy, p);
}

/** Role bindings: who holds which role at which group. */
export class RoleBindingService {
  constructor(private readonly d: RoleBindingServiceDeps) {}

  /**
   * Bind `roleUid` to `identityUid` at the group `groupUid`.
   * @throws RpcError INVALID_ARGUMENT (`identityUid`/`roleUid` malformed, missing or out of
   *   place), NOT_FOUND (group), PERMISSION_DENIED (no role_bindings.create, or the role
   *   holds capabilities the caller lacks), ALREADY_EXISTS (the same binding exists).
   */
  async create(
    p: Principal,
    groupUid: string | undefined,
    body: Record<string, unknown>,
  ): Promise<RoleBinding> {
    if (groupUid === undefined) throw invalidField('parent', 'a group uid is required');
    requireUid(groupUid, 'parent');
    const input = parseInput(
      roleBindingCreateSchema,
      withoutKeys(body, ROLE_BINDING_UPDATE.outputOnly),
    );
    if (input.condition !== undefined) requireCompiles(input.condition.expression);
    await this.requireCreatable(p, { groupUid, ...input });
    const created = await this.d.authz.changingGrants(
      this.d.uow.run(async (tx) => {
        const inserted = await this.d.bindings.insert(tx, {
          uid: newChildUid(groupUid),
          parentUid: groupUid,
          ...input,
        });
        const b = this.d.managed
          ? await this.d.managed.created(tx, 'role_bindings', inserted, p)
          : inserted;
        await this.d.audit?.record(tx, p, {
          type: ROLE_BINDING_TYPE,
          operation: 'create',
          uid: b.uid,
          after: b,
        });
        return b;
      }),
    );
    return visibleBinding(this.d.authz, p, created);
  }

  /**
   * Whether `p` could create this binding now, by `create`'s own checks, without writing
   * (an access request's approver must be able to: access-request-service.ts).
   * `known`: the identity or role is shown to `p` by what it decides (the access request
   * names them), so only its existence is asked, not whether `p` may list it; the group
   * and every capability of the role are checked as for `create`.
   * @throws RpcError as `create`.
   */
  async requireCreatable(
    p: Principal,
    t: Target & { expireTime?: Date },
    known?: KnownRefs,
  ): Promise<void> {
    await this.d.authz.require(p, 'role_bindings.create', t.groupUid, 'groups.list', GROUP_TYPE);
    const roleCapabilities = await this.check(p, t, known);
    await requireBindingCreatable(this.d.authz, p, {
      groupUid: t.groupUid,
      roleCapabilities,
      ...(t.expireTime === undefined ? {} : { expireTime: t.expireTime }),
      now: Date.now(),
    });
  }

  /** @throws RpcError INVALID_ARGUMENT (malformed uid), NOT_FOUND (missing or invisible). */
  async get(p: Principal, uid: string): Promise<RoleBinding> {
    requireUid(uid);
    await this.d.authz.require(
      p,
      'role_bindings.list',
      uid,
      'role_bindings.list',
      ROLE_BINDING_TYPE,
    );
    const found = await this.d.uow.replicaRead((tx) => this.d.bindings.get(tx, uid));
    if (!found) throw notFound(ROLE_BINDING_TYPE, uid);
    return visibleBinding(this.d.authz, p, found);
  }

  /**
   * Bindings the caller may list, hydrated with what it may see of each reference (see
   * `reference-visibility.ts`). @throws RpcError INVALID_ARGUMENT.
   */
  async list(p: Principal, req: ListRequest): Promise<ListPage<RoleBinding>> {
    const visibility = await this.d.authz.visibility(p, 'role_bindings.list');
    const page = await this.d.pager.page(ROLE_BINDING_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.bindings.list(tx, q)),
    );
    const items = await Promise.all(page.items.map((b) => visibleBinding(this.d.authz, p, b)));
    return { ...page, items };
  }

  /**
   * Point a binding at another role (or identity); the group never changes.
   * @throws RpcError as `create`, and NOT_FOUND for a missing binding.
   */
  async update(
    p: Principal,
    uid: string,
    body: Record<string, unknown>,
    updateMask: string | string[] | undefined,
  ): Promise<RoleBinding> {
    requireUid(uid);
    const patch = parseInput(
      roleBindingPatchSchema,
      resolvePatch(body, parseMask(updateMask), ROLE_BINDING_UPDATE),
    );
    const { cur, target } = await this.requireUpdatable(p, uid, patch);
    const updated = await this.d.authz.changingGrants(
      this.d.uow.run(async (tx) => {
        await this.d.managed?.beforeWrite(tx, 'role_bindings', uid, p);
        const row = await this.d.bindings.update(tx, uid, target);
        if (!row) throw notFound(ROLE_BINDING_TYPE, uid);
        await this.d.audit?.record(tx, p, {
          type: ROLE_BINDING_TYPE,
          operation: 'update',
          uid,
          before: cur,
          after: row,
        });
        return row;
      }),
    );
    return visibleBinding(this.d.authz, p, updated);
  }

  /**
   * Whether `p` could update binding `uid` with `patch` now, by `update`'s own checks,
   * without writing (an access review's `shorten` must pass them: access-review-service.ts).
   * `known`: as for `requireCreatable` (the review item shows its holder and role).
   * @returns the binding as read (after the caller's access was decided) and its target
   *   after the patch. @throws RpcError as `update`.
   */
  async requireUpdatable(
    p: Principal,
    uid: string,
    patch: { identityUid?: string; roleUid?: string; expireTime?: Date },
    known?: KnownRefs,
  ): Promise<{ cur: RoleBinding; target: Target & { expireTime?: Date } }> {
    await this.d.authz.require(
      p,
      'role_bindings.update',
      uid,
      'role_bindings.list',
      ROLE_BINDING_TYPE,
    );
    const cur = await this.d.uow.read((tx) => this.d.bindings.get(tx, uid));
    if (!cur) throw notFound(ROLE_BINDING_TYPE, uid);
    const expireTime = patch.expireTime;
    // Only forward: a later expiry would extend access, which only a new binding grants.
    if (expireTime !== undefined && cur.expireTime !== undefined && expireTime > cur.expireTime)
      throw invalidField('expireTime', 'an update may only bring a binding’s expiry forward');
    // A scheduled binding's window stays non-empty (the table's check would refuse it as a
    // fault otherwise).
    if (expireTime !== undefined && cur.notBefore !== undefined && expireTime <= cur.notBefore)
      throw invalidField(
        'expireTime',
        `must be after the binding's notBefore (${cur.notBefore.toISOString()})`,
      );
    const target = {
      groupUid: cur.parentUid,
      identityUid: patch.identityUid ?? cur.identity.uid,
      roleUid: patch.roleUid ?? cur.role.uid,
      ...(expireTime === undefined ? {} : { expireTime }),
    };
    await requireHeld(this.d.authz, p, await this.check(p, target, known), target.groupUid);
    return { cur, target };
  }

  /**
   * Delete a binding (AIP-135 without `allow_missing`: one that is already gone is
   * NOT_FOUND, as for every kind, and leaves no audit record).
   * @throws RpcError INVALID_ARGUMENT (malformed uid), NOT_FOUND (missing, invisible, or
   *   deleted meanwhile), PERMISSION_DENIED.
   */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(
      p,
      'role_bindings.delete',
      uid,
      'role_bindings.list',
      ROLE_BINDING_TYPE,
    );
    await this.d.authz.changingGrants(
      this.d.uow.run(async (tx) => {
        await requireBindingDeletable(this.d.authz, p, {
          uid,
          managedBy: (await this.d.managed?.managerOf(tx, 'role_bindings', uid)) ?? null,
        });
        await this.d.managed?.beforeWrite(tx, 'role_bindings', uid, p);
        const before = await this.d.bindings.get(tx, uid);
        // Nothing removed (never there, or another transaction got there first) is NOT_FOUND.
        if (!before || (await revokeBindings(tx, this.d, p, [before])).length === 0)
          throw notFound(ROLE_BINDING_TYPE, uid);
      }),
    );
  }

  /**
   * The rules a binding's target must satisfy, checked before the write; the foreign keys
   * catch anything deleted in between. An identity or role the caller cannot list is
   * "not found" exactly like one that does not exist, so the answer is no oracle. One
   * widening for the identity: one already bound at a group where the caller may bind, by
   * a binding the caller may list, is referable by uid (`referableWithin`); the caller
   * learnt its uid from that binding, and learns nothing more.
   * @returns the role's capabilities (the caller's holding them is checked by the caller).
   */
  private async check(p: Principal, t: Target, known?: KnownRefs): Promise<readonly Capability[]> {
    const placement = placementViolations(t.groupUid, t.identityUid, t.roleUid);
    if (placement.length > 0) throw invalidArgument(placement);
    // Decided from the caller's grants before anything is read: a hidden identity and a
    // missing one cost the same statement.
    const seesIdentity =
      known?.identity === true || (await canSeeIdentity(this.d.authz, p, t.identityUid));
    const bound = seesIdentity ? undefined : await referableWithin(this.d.authz, p);
    const refs = await this.d.uow.read((tx) =>
      this.d.bindings.refs(tx, t.groupUid, t.identityUid, t.roleUid, bound),
    );
    if (!refs.groupExists) throw notFound(GROUP_TYPE, t.groupUid);
    const identityFound = refs.identityExists && (seesIdentity || refs.identityBound);
    const roleCapabilities =
      refs.roleCapabilities &&
      (known?.role === true || (await canSeeRole(this.d.authz, p, t.roleUid)))
        ? refs.roleCapabilities
        : undefined;
    const missing: FieldViolation[] = [];
    if (!identityFound) missing.push({ field: 'identityUid', description: 'identity not found' });
    if (!roleCapabilities) missing.push({ field: 'roleUid', description: 'role not found' });
    if (missing.length > 0 || !roleCapabilities) throw invalidArgument(missing);
    return roleCapabilities;
  }
}

/**
 * Where an identity `p` may not list is still referable by uid for a binding: bound at a
 * group where `p` may bind (`role_bindings.create`), by a binding `p` may list
 * (`role_bindings.list`). A folder's owner binds at its folder an identity of the
 * organization that already holds a role there (one an approval made, say): the binding
 * it sees named the identity to it. access:simulate's world decides by the same rule
 * (`SimulatedWorld`).
 */
export async function referableWithin(authz: Authorizer, p: Principal): Promise<BoundWithin> {
  const [at, seen] = await Promise.all([
    authz.visibility(p, 'role_bindings.create'),
    authz.visibility(p, 'role_bindings.list'),
  ]);
  return { at, seen };
}

/**
 * A condition is checked against the environment before anything is read or written.
 * @throws RpcError INVALID_ARGUMENT on `condition.expression`, naming the fault's position.
 */
function requireCompiles(expression: string): void {
  try {
    compileCondition(expression);
  } catch (err) {
    if (err instanceof ConditionError) throw invalidField('condition.expression', err.message);
    throw err;
  }
}
