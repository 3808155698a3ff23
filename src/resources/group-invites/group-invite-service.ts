import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import {
  failedPrecondition,
  invalidArgument,
  invalidField,
  notFound,
} from '../../core/rpc-error.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import { newChildUid, parentOf } from '../../core/uidp.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { GroupStore } from '../groups/group-store.js';
import { requireGrantableRole } from '../identity-providers/grantable-role.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import { visibleRoleRef } from '../reference-visibility.js';
import type { ListPage } from '../list-types.js';
import { ROLE_BINDING_TYPE, type RoleBinding } from '../role-bindings/role-binding.js';
import { placementViolations } from '../role-bindings/role-binding-input.js';
import type { RoleBindingStore } from '../role-bindings/role-binding-store.js';
import type { RoleStore } from '../roles/role-store.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import {
  GROUP_INVITE_LIST,
  GROUP_INVITE_OUTPUT_ONLY,
  GROUP_INVITE_TYPE,
  GROUP_INVITE_UPDATE,
  type CreatedGroupInvite,
  type GroupInvite,
} from './group-invite.js';
import {
  groupInviteCreateSchema,
  groupInviteUpdateSchema,
  redeemSchema,
} from './group-invite-input.js';
import type { GroupInviteStore } from './group-invite-store.js';
import { codeMatches, inviteUidOf, newInviteCode } from './invite-code.js';

export interface GroupInviteServiceDeps {
  uow: UnitOfWork;
  invites: GroupInviteStore;
  groups: GroupStore;
  roles: Pick<RoleStore, 'get'>;
  bindings: Pick<RoleBindingStore, 'insert'>;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
}

type Body = Record<string, unknown>;
const T = GROUP_INVITE_TYPE;

/**
 * Group invites: a code that, redeemed by an identity, binds it to a role at the group.
 * An invite is a promise of a role binding, so creating one needs what binding needs.
 */
export class GroupInviteService {
  constructor(private readonly d: GroupInviteServiceDeps) {}

  /**
   * Create an invite under `groupUid`. The response is the only place the code appears.
   * @throws RpcError INVALID_ARGUMENT (fields, `roleUid`), NOT_FOUND (group),
   *   PERMISSION_DENIED (no group_invites.create or role_bindings.create, or a role
   *   with capabilities the caller does not hold).
   */
  async create(
    p: Principal,
    groupUid: string | undefined,
    body: Body,
  ): Promise<CreatedGroupInvite> {
    const group = requireUid(groupUid ?? '', 'parent');
    const input = parseInput(groupInviteCreateSchema, withoutKeys(body, GROUP_INVITE_OUTPUT_ONLY));
    await this.d.authz.require(p, 'group_invites.create', group, 'groups.list', GROUP_TYPE);
    await this.d.authz.require(p, 'role_bindings.create', group, 'groups.list', GROUP_TYPE);
    const uid = newChildUid(group);
    const { code, hash } = newInviteCode(uid);
    const invite = await this.d.uow.run(async (tx) => {
      if (!(await this.d.groups.get(tx, group))) throw notFound(GROUP_TYPE, group);
      await requireGrantableRole(this.d, p, tx, input.roleUid, group, 'roleUid');
      const created = await this.d.invites.insert(tx, {
        uid,
        parentUid: group,
        roleUid: input.roleUid,
        email: input.email ?? null,
        singleUse: input.singleUse ?? false,
        codeHash: hash,
        ttlMs: input.ttl,
      });
      // Recorded without its code: the code is the credential, and never stored in clear.
      await this.d.audit.record(tx, p, { type: T, operation: 'create', uid, after: created });
      return created;
    });
    return { ...invite, code };
  }

  /** @throws RpcError NOT_FOUND when missing or invisible to the caller. */
  async get(p: Principal, uid: string): Promise<GroupInvite> {
    requireUid(uid);
    await this.d.authz.require(p, 'group_invites.list', uid, 'group_invites.list', T);
    const invite = await this.d.uow.replicaRead((tx) => this.d.invites.get(tx, uid));
    if (!invite) throw notFound(T, uid);
    return this.visible(p, invite);
  }

  /** The invite with its role shown only as far as the caller may list that role. */
  private async visible(p: Principal, invite: GroupInvite): Promise<GroupInvite> {
    if (!invite.role) return invite;
    return { ...invite, role: await visibleRoleRef(this.d.authz, p, invite.role) };
  }

  /** Newest first unless `order_by` says otherwise. @throws RpcError INVALID_ARGUMENT. */
  async list(p: Principal, req: ListRequest): Promise<ListPage<GroupInvite>> {
    const visibility = await this.d.authz.visibility(p, 'group_invites.list');
    const page = await this.d.pager.page(GROUP_INVITE_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.invites.list(tx, q)),
    );
    return { ...page, items: await Promise.all(page.items.map((i) => this.visible(p, i))) };
  }

  /**
   * Change an invite's role or expiry (mask rules as for every update). Re-issuing the
   * terms of an invite needs what issuing it needs: group_invites.create and
   * role_bindings.create at its group, and a new role the caller could grant.
   * @throws RpcError INVALID_ARGUMENT (mask, fields, `roleUid`), NOT_FOUND (missing or
   *   invisible), PERMISSION_DENIED.
   */
  async update(
    p: Principal,
    uid: string,
    body: Body,
    updateMask: string | string[] | undefined,
  ): Promise<GroupInvite> {
    requireUid(uid);
    const patch = parseInput(
      groupInviteUpdateSchema,
      resolvePatch(body, parseMask(updateMask), GROUP_INVITE_UPDATE),
    );
    const group = parentOf(uid) ?? uid;
    await this.d.authz.require(p, 'group_invites.create', uid, 'group_invites.list', T);
    await this.d.authz.require(p, 'role_bindings.create', group, 'groups.list', GROUP_TYPE);
    return this.d.uow.run(async (tx) => {
      if (patch.roleUid !== undefined) {
        await requireGrantableRole(this.d, p, tx, patch.roleUid, group, 'roleUid');
      }
      const updated = await this.d.invites.update(tx, uid, patch);
      if (!updated) throw notFound(T, uid);
      return updated;
    });
  }

  /** @throws RpcError NOT_FOUND when missing or invisible, PERMISSION_DENIED. */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(p, 'group_invites.delete', uid, 'group_invites.list', T);
    await this.d.uow.run(async (tx) => {
      const before = await this.d.invites.get(tx, uid);
      if (!(await this.d.invites.delete(tx, uid))) throw notFound(T, uid);
      await this.d.audit.record(tx, p, { type: T, operation: 'delete', uid, before });
    });
  }

  /**
   * Redeem an invite code: bind the calling identity to the invite's role at its group,
   * in one transaction with marking a single-use invite used. The code is the credential,
   * so no capability is needed. Identities carry no email address, so an invite's `email`
   * cannot be checked against the caller and is not enforced (it records whom it was for).
   *
   * The identity must be one a binding at the group may name (root-level or in the
   * group's organization), exactly as for a binding created directly.
   *
   * @throws RpcError INVALID_ARGUMENT (`code` malformed; the caller is not an identity, is
   *   outside the group's organization, or no longer exists), NOT_FOUND (no invite has this
   *   code: unknown and wrong secrets answer alike), FAILED_PRECONDITION (INVITE_EXPIRED,
   *   INVITE_USED), ALREADY_EXISTS (the identity already has this role at the group).
   */
  async redeem(p: Principal, body: Body): Promise<RoleBinding> {
    const { code } = parseInput(redeemSchema, body);
    if (p.kind !== 'identity') {
      throw invalidField('identity', 'only an identity can redeem an invite; use its API token');
    }
    const uid = inviteUidOf(code);
    if (uid === undefined) throw invalidField('code', 'is not an invite code');
    // The new binding changes the redeemer's grants.
    return this.d.authz.changingGrants(this.redeemIn(p.uid, uid, code, p));
  }

  private redeemIn(identityUid: string, uid: string, code: string, p: Principal) {
    return this.d.uow.run(async (tx) => {
      const invite = await this.d.invites.lockForRedeem(tx, uid);
      if (!invite || !codeMatches(code, invite.codeHash)) throw notFound(T, 'the given code');
      if (invite.expired) {
        throw failedPrecondition('INVITE_EXPIRED', 'the invite has expired', invite.uid);
      }
      if (invite.singleUse && invite.usedTime !== null) {
        throw failedPrecondition('INVITE_USED', 'the invite has already been used', invite.uid);
      }
      const misplaced = placementViolations(invite.parentUid, identityUid, invite.roleUid);
      if (misplaced.length > 0) {
        throw invalidArgument(misplaced.map((v) => ({ ...v, field: 'identity' })));
      }
      const binding = await this.d.bindings.insert(tx, {
        uid: newChildUid(invite.parentUid),
        parentUid: invite.parentUid,
        identityUid,
        roleUid: invite.roleUid,
      });
      if (invite.singleUse) await this.d.invites.markUsed(tx, invite.uid);
      // The redeemer is the actor: its own token made the binding.
      await this.d.audit.record(tx, p, {
        type: ROLE_BINDING_TYPE,
        operation: 'create',
        uid: binding.uid,
        after: binding,
      });
      return binding;
    });
  }
}
