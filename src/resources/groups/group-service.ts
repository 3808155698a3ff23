import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound, permissionDenied } from '../../core/rpc-error.js';
import { isValidUidp, newChildUid, newRootUid } from '../../core/uidp.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import { requireUnmanaged, type ManagedGuard } from '../managed/managed-guard.js';
import type { ReadCache } from '../read-cache.js';
import type { Tx, UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import { GROUP_LIST, GROUP_TYPE, GROUP_UPDATE, type Group } from './group.js';
import { groupCreateSchema, groupPatchSchema } from './group-input.js';
import { maintainedCount, type GroupStore } from './group-store.js';

export interface GroupServiceDeps {
  uow: UnitOfWork;
  groups: GroupStore;
  authz: Authorizer;
  pager: ListPager;
  /** Refuses writes to rows a custom resource manages (migration 0008); absent: no check. */
  managed?: ManagedGuard;
  /** Records every change in the audit trail and event outbox (absent only in unit tests). */
  audit: ChangeRecorder;
  /** Where a Get may find the row without asking the database (absent: none). */
  cache?: ReadCache<Group | undefined>;
}

/** @throws RpcError INVALID_ARGUMENT unless `uid` is a well-formed uid path. */
export function requireUid(uid: string, field = 'uid'): string {
  if (!isValidUidp(uid)) throw invalidField(field, 'must be a uid path');
  return uid;
}

/** What a group's delete decides on, for the group and the groups and roles below it. */
export interface GroupDeleteFacts {
  uid: string;
  /** The Kubernetes object managing it (`managed_by`), null when none. */
  managedBy: string | null;
  /** The manager of a group below it, null when none is managed (or nothing is below). */
  managedBelow: string | null;
  /** Whether custom roles are defined at it or below (a cascade deletes them too). */
  rolesBelow: boolean;
}

/**
 * The dry run of a group's delete, and of the group part of a cascading delete (the
 * groups and roles below it; access:simulate adds the dry runs of the binding and identity
 * deletes the cascade makes, by their own services). `delete` decides by it inside its
 * transaction.
 * @throws RpcError NOT_FOUND (not visible), PERMISSION_DENIED (no groups.delete; no
 *   roles.delete where roles are defined below), FAILED_PRECONDITION (MANAGED_BY_KUBERNETES).
 */
export async function requireGroupDeletable(
  authz: Authorizer,
  p: Principal,
  f: GroupDeleteFacts,
): Promise<void> {
  await authz.require(p, 'groups.delete', f.uid, 'groups.list', GROUP_TYPE);
  requireUnmanaged(f.managedBy, p);
  requireUnmanaged(f.managedBelow, p);
  if (f.rolesBelow) await authz.require(p, 'roles.delete', f.uid, 'groups.list', GROUP_TYPE);
}

/** Groups: the rules of the tree, shared by the REST routes and the reconciler. */
export class GroupService {
  constructor(private readonly d: GroupServiceDeps) {}

  /**
   * Create an organization (no parent; the admin token only) or a folder under `parentUid`.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (parent), PERMISSION_DENIED.
   */
  async create(
    p: Principal,
    parentUid: string | undefined,
    body: Record<string, unknown>,
  ): Promise<Group> {
    const input = parseInput(groupCreateSchema, withoutKeys(body, GROUP_UPDATE.outputOnly));
    if (parentUid === undefined) {
      if (!this.d.authz.isSuperuser(p))
        throw permissionDenied('only an administrator can create an organization');
    } else {
      requireUid(parentUid, 'parent');
      await this.d.authz.require(p, 'groups.create', parentUid, 'groups.list', GROUP_TYPE);
    }
    return this.d.uow.run(async (tx) => {
      if (parentUid !== undefined && !(await this.d.groups.get(tx, parentUid))) {
        throw notFound(GROUP_TYPE, parentUid);
      }
      const g = await this.d.groups.insert(tx, {
        uid: parentUid === undefined ? newRootUid() : newChildUid(parentUid),
        parentUid: parentUid ?? null,
        name: input.name,
        description: input.description ?? '',
      });
      const out = this.d.managed ? await this.d.managed.created(tx, 'groups', g, p) : g;
      await this.d.audit.record(tx, p, {
        type: GROUP_TYPE,
        operation: 'create',
        uid: out.uid,
        after: out,
      });
      return out;
    });
  }

  /** @throws RpcError NOT_FOUND when missing or invisible to the caller. */
  async get(p: Principal, uid: string): Promise<Group> {
    requireUid(uid);
    await this.d.authz.require(p, 'groups.list', uid, 'groups.list', GROUP_TYPE);
    const g = await (this.d.cache
      ? this.d.cache.read(uid, (primary) => this.load(uid, primary))
      : this.load(uid, false));
    if (!g) throw notFound(GROUP_TYPE, uid);
    return g;
  }

  /** The row, from the primary (`primary`: a cache may keep it) or, else, maybe a replica. */
  private load(uid: string, primary: boolean): Promise<Group | undefined> {
    const get = (tx: Tx) => this.d.groups.get(tx, uid);
    return primary ? this.d.uow.read(get) : this.d.uow.replicaRead(get);
  }

  async list(p: Principal, req: ListRequest): Promise<ListPage<Group>> {
    const visibility = await this.d.authz.visibility(p, 'groups.list');
    return this.d.pager.page(
      GROUP_LIST,
      req,
      visibility,
      (q) => this.d.uow.replicaRead((tx) => this.d.groups.list(tx, q)),
      (q) => maintainedCount(q) !== undefined,
    );
  }

  /**
   * Field-mask update (spec §4.2): without a mask only the fields in the body change.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED.
   */
  async update(
    p: Principal,
    uid: string,
    body: Record<string, unknown>,
    updateMask: string | string[] | undefined,
  ): Promise<Group> {
    requireUid(uid);
    const patch = parseInput(
      groupPatchSchema,
      resolvePatch(body, parseMask(updateMask), GROUP_UPDATE),
    );
    await this.d.authz.require(p, 'groups.update', uid, 'groups.list', GROUP_TYPE);
    return this.d.uow.run(async (tx) => {
      await this.d.managed?.beforeWrite(tx, 'groups', uid, p);
      const before = await this.d.groups.get(tx, uid);
      const g = await this.d.groups.update(tx, uid, patch);
      if (!g) throw notFound(GROUP_TYPE, uid);
      await this.d.audit.record(tx, p, {
        type: GROUP_TYPE,
        operation: 'update',
        uid,
        before,
        after: g,
      });
      return g;
    });
  }

  /** @throws RpcError FAILED_PRECONDITION (RESOURCE_NOT_EMPTY) while anything hangs below. */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(p, 'groups.delete', uid, 'groups.list', GROUP_TYPE);
    await this.d.uow.run(async (tx) => {
      // It deletes the group alone: anything below refuses the delete (RESOURCE_NOT_EMPTY).
      await requireGroupDeletable(this.d.authz, p, {
        uid,
        managedBy: (await this.d.managed?.managerOf(tx, 'groups', uid)) ?? null,
        managedBelow: null,
        rolesBelow: false,
      });
      await this.d.managed?.beforeWrite(tx, 'groups', uid, p);
      const before = await this.d.groups.get(tx, uid);
      if (!(await this.d.groups.delete(tx, uid))) throw notFound(GROUP_TYPE, uid);
      await this.d.audit.record(tx, p, { type: GROUP_TYPE, operation: 'delete', uid, before });
    });
  }
}
