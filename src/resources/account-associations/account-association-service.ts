import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import { notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { GroupStore } from '../groups/group-store.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import {
  ACCOUNT_ASSOCIATION_LIST,
  ACCOUNT_ASSOCIATION_TYPE,
  ACCOUNT_ASSOCIATION_UPDATE,
  type AccountAssociation,
} from './account-association.js';
import {
  accountAssociationCreateSchema,
  accountAssociationPatchSchema,
  type AccountAssociationCreate,
} from './account-association-input.js';
import type {
  AccountAssociationFields,
  AccountAssociationStore,
} from './account-association-store.js';

export interface AccountAssociationServiceDeps {
  uow: UnitOfWork;
  associations: AccountAssociationStore;
  groups: GroupStore;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
}

type Body = Record<string, unknown>;
const T = ACCOUNT_ASSOCIATION_TYPE;

function azureOf(a: AccountAssociationCreate['azure']): AccountAssociationFields['azure'] {
  return a ? { tenantId: a.tenantId, clientIds: a.clientIds ?? {} } : null;
}

/**
 * Account associations: one per group, addressed by the group's uid. Access is decided at
 * the group itself, since the association's uid is the group's.
 */
export class AccountAssociationService {
  constructor(private readonly d: AccountAssociationServiceDeps) {}

  /**
   * Associate accounts with `groupUid`.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (group), ALREADY_EXISTS (the group has
   *   one), PERMISSION_DENIED.
   */
  async create(
    p: Principal,
    groupUid: string | undefined,
    body: Body,
  ): Promise<AccountAssociation> {
    const group = requireUid(groupUid ?? '', 'parent');
    const input = parseInput(
      accountAssociationCreateSchema,
      withoutKeys(body, ACCOUNT_ASSOCIATION_UPDATE.outputOnly),
    );
    await this.d.authz.require(p, 'account_associations.create', group, 'groups.list', GROUP_TYPE);
    return this.d.uow.run(async (tx) => {
      if (!(await this.d.groups.get(tx, group))) throw notFound(GROUP_TYPE, group);
      const a = await this.d.associations.insert(tx, group, {
        name: input.name,
        description: input.description ?? '',
        amazon: input.amazon ?? null,
        google: input.google ?? null,
        azure: azureOf(input.azure),
      });
      await this.d.audit.record(tx, p, { type: T, operation: 'create', uid: group, after: a });
      return a;
    });
  }

  /** @throws RpcError NOT_FOUND when missing or invisible to the caller. */
  async get(p: Principal, uid: string): Promise<AccountAssociation> {
    requireUid(uid);
    await this.d.authz.require(p, 'account_associations.list', uid, 'account_associations.list', T);
    const a = await this.d.uow.replicaRead((tx) => this.d.associations.get(tx, uid));
    if (!a) throw notFound(T, uid);
    return a;
  }

  /** @throws RpcError INVALID_ARGUMENT for a bad list request or page token. */
  async list(p: Principal, req: ListRequest): Promise<ListPage<AccountAssociation>> {
    const visibility = await this.d.authz.visibility(p, 'account_associations.list');
    return this.d.pager.page(ACCOUNT_ASSOCIATION_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.associations.list(tx, q)),
    );
  }

  /**
   * Field-mask update of name, description, amazon, google, azure (null clears a cloud).
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED.
   */
  async update(
    p: Principal,
    uid: string,
    body: Body,
    updateMask: string | string[] | undefined,
  ): Promise<AccountAssociation> {
    requireUid(uid);
    const patch = parseInput(
      accountAssociationPatchSchema,
      resolvePatch(body, parseMask(updateMask), ACCOUNT_ASSOCIATION_UPDATE),
    );
    await this.d.authz.require(
      p,
      'account_associations.update',
      uid,
      'account_associations.list',
      T,
    );
    const fields: Partial<AccountAssociationFields> = {};
    if (patch.name !== undefined) fields.name = patch.name;
    if (patch.description !== undefined) fields.description = patch.description;
    if (patch.amazon !== undefined) fields.amazon = patch.amazon;
    if (patch.google !== undefined) fields.google = patch.google;
    if (patch.azure !== undefined) fields.azure = azureOf(patch.azure);
    return this.d.uow.run(async (tx) => {
      const before = await this.d.associations.get(tx, uid);
      const a = await this.d.associations.update(tx, uid, fields);
      if (!a) throw notFound(T, uid);
      await this.d.audit.record(tx, p, { type: T, operation: 'update', uid, before, after: a });
      return a;
    });
  }

  /**
   * Delete a group's association (AIP-135 without `allow_missing`: an absent one is
   * NOT_FOUND, as for every kind, and leaves no audit record).
   * @throws RpcError NOT_FOUND (absent, or the group is invisible), PERMISSION_DENIED.
   */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(
      p,
      'account_associations.delete',
      uid,
      'account_associations.list',
      T,
    );
    await this.d.uow.run(async (tx) => {
      const before = await this.d.associations.get(tx, uid);
      if (!before || !(await this.d.associations.delete(tx, uid))) throw notFound(T, uid);
      await this.d.audit.record(tx, p, { type: T, operation: 'delete', uid, before });
    });
  }
}
