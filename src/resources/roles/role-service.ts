import type { Authorizer } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import { failedPrecondition, invalidField, notFound } from '../../core/rpc-error.js';
import { isRootUid, newChildUid, parentOf } from '../../core/uidp.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import { requireHeld } from './grant-guard.js';
import { ROLE_LIST, ROLE_TYPE, ROLE_UPDATE, type Role } from './role.js';
import { roleCreateSchema, rolePatchSchema } from './role-input.js';
import type { RoleStore } from './role-store.js';

export interface RoleServiceDeps {
  uow: UnitOfWork;
  roles: RoleStore;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
}

/** What a custom role's update decides on. */
export interface RoleUpdateFacts {
  uid: string;
  /** The capabilities it would grant; absent: unchanged. */
  capabilities?: readonly Capability[];
}

/**
 * The dry run of a custom role's update: `update` and access:simulate both decide by it.
 * Whoever gives a role capabilities must hold them where the role is defined.
 * @throws RpcError NOT_FOUND (not visible), PERMISSION_DENIED (no roles.update, or
 *   capabilities the caller does not hold).
 */
export async function requireRoleUpdatable(
  authz: Authorizer,
  p: Principal,
  f: RoleUpdateFacts,
): Promise<void> {
  await authz.require(p, 'roles.update', f.uid, 'roles.list', ROLE_TYPE);
  if (f.capabilities) await requireHeld(authz, p, f.capabilities, parentOf(f.uid) ?? f.uid);
}

/**
 * Roles: built-ins (root-level uids, visible to every caller, immutable) and custom roles
 * defined under a group (visible and changeable with roles.* at that group).
 */
export class RoleService {
  constructor(private readonly d: RoleServiceDeps) {}

  /**
   * Define a role under the group `parentUid`.
   * @throws RpcError INVALID_ARGUMENT (`capabilities` empty or unknown), NOT_FOUND (group),
   *   PERMISSION_DENIED (no roles.create, or capabilities the caller does not hold).
   */
  async create(
    p: Principal,
    parentUid: string | undefined,
    body: Record<string, unknown>,
  ): Promise<Role> {
    if (parentUid === undefined) throw invalidField('parent', 'a group uid is required');
    requireUid(parentUid, 'parent');
    const input = parseInput(roleCreateSchema, withoutKeys(body, ROLE_UPDATE.outputOnly));
    await this.d.authz.require(p, 'roles.create', parentUid, 'groups.list', GROUP_TYPE);
    await requireHeld(this.d.authz, p, input.capabilities, parentUid);
    return this.d.uow.run(async (tx) => {
      const role = await this.d.roles.insert(tx, {
        uid: newChildUid(parentUid),
        parentUid,
        name: input.name,
        description: input.description ?? '',
        capabilities: input.capabilities,
      });
      await this.d.audit.record(tx, p, {
        type: ROLE_TYPE,
        operation: 'create',
        uid: role.uid,
        after: role,
      });
      return role;
    });
  }

  /** Built-ins for anyone; custom roles with roles.list. @throws RpcError INVALID_ARGUMENT, NOT_FOUND. */
  async get(p: Principal, uid: string): Promise<Role> {
    requireUid(uid);
    if (!isRootUid(uid)) await this.d.authz.require(p, 'roles.list', uid, 'roles.list', ROLE_TYPE);
    const role = await this.d.uow.replicaRead((tx) => this.d.roles.get(tx, uid));
    if (!role) throw notFound(ROLE_TYPE, uid);
    return role;
  }

  /** Every built-in plus the custom roles the caller may list. @throws RpcError INVALID_ARGUMENT. */
  async list(p: Principal, req: ListRequest): Promise<ListPage<Role>> {
    const visibility = await this.d.authz.visibility(p, 'roles.list');
    return this.d.pager.page(ROLE_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.roles.list(tx, q)),
    );
  }

  /**
   * Field-mask update of name, description and capabilities of a custom role.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED,
   *   FAILED_PRECONDITION (BUILT_IN_ROLE) for a built-in.
   */
  async update(
    p: Principal,
    uid: string,
    body: Record<string, unknown>,
    updateMask: string | string[] | undefined,
  ): Promise<Role> {
    requireUid(uid);
    await this.refuseBuiltIn(uid, 'updated');
    const patch = parseInput(
      rolePatchSchema,
      resolvePatch(body, parseMask(updateMask), ROLE_UPDATE),
    );
    await requireRoleUpdatable(this.d.authz, p, {
      uid,
      ...(patch.capabilities ? { capabilities: patch.capabilities } : {}),
    });
    return this.d.authz.changingGrants(
      this.d.uow.run(async (tx) => {
        const before = await this.d.roles.get(tx, uid);
        const role = await this.d.roles.update(tx, uid, patch);
        if (!role) throw notFound(ROLE_TYPE, uid);
        await this.d.audit.record(tx, p, {
          type: ROLE_TYPE,
          operation: 'update',
          uid,
          before,
          after: role,
        });
        return role;
      }),
    );
  }

  /**
   * Delete a custom role that no binding names.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION
   *   (BUILT_IN_ROLE for a built-in, RESOURCE_IN_USE while bound).
   */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.refuseBuiltIn(uid, 'deleted');
    await this.d.authz.require(p, 'roles.delete', uid, 'roles.list', ROLE_TYPE);
    await this.d.uow.run(async (tx) => {
      const before = await this.d.roles.get(tx, uid);
      if (!(await this.d.roles.delete(tx, uid))) throw notFound(ROLE_TYPE, uid);
      await this.d.audit.record(tx, p, { type: ROLE_TYPE, operation: 'delete', uid, before });
    });
  }

  /**
   * A flat uid can only be a built-in (custom roles hang under a group). Every caller
   * sees the built-ins, so saying why is no leak.
   */
  private async refuseBuiltIn(uid: string, what: string): Promise<void> {
    if (!isRootUid(uid)) return;
    const role = await this.d.uow.read((tx) => this.d.roles.get(tx, uid));
    if (!role) throw notFound(ROLE_TYPE, uid);
    throw failedPrecondition('BUILT_IN_ROLE', `built-in role ${role.name} cannot be ${what}`, uid);
  }
}
