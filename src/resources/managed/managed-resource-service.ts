import type { Authorizer } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import { IDENTITY_TYPE } from '../identities/identity.js';
import { ROLE_BINDING_TYPE } from '../role-bindings/role-binding.js';
import type { UnitOfWork } from '../tx.js';
import type { ManagedGuard, ManagedTable } from './managed-guard.js';

export interface ManagedResourceServiceDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  guard: ManagedGuard;
}

const ACCESS: Readonly<Record<ManagedTable, [Capability, Capability, string]>> = {
  groups: ['groups.update', 'groups.list', GROUP_TYPE],
  identities: ['identity.update', 'identity.list', IDENTITY_TYPE],
  role_bindings: ['role_bindings.update', 'role_bindings.list', ROLE_BINDING_TYPE],
};

/**
 * Taking and giving up management of a resource, for the reconciler: a custom resource
 * that finds its resource already in sync claims it without another write to it, and one
 * deleted with `deletionPolicy: Orphan` releases it. Both need the kind's update
 * capability, like any other change.
 */
export class ManagedResourceService {
  constructor(private readonly d: ManagedResourceServiceDeps) {}

  /** @throws RpcError NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION (managed by another). */
  async claim(p: Principal, table: ManagedTable, uid: string): Promise<void> {
    await this.authorize(p, table, uid);
    await this.d.uow.run((tx) => this.d.guard.beforeWrite(tx, table, uid, p));
  }

  /** @throws RpcError NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION (managed by another). */
  async release(p: Principal, table: ManagedTable, uid: string): Promise<void> {
    await this.authorize(p, table, uid);
    await this.d.uow.run((tx) => this.d.guard.release(tx, table, uid, p));
  }

  private async authorize(p: Principal, table: ManagedTable, uid: string): Promise<void> {
    requireUid(uid);
    const [cap, see, type] = ACCESS[table];
    await this.d.authz.require(p, cap, uid, see, type);
  }
}
