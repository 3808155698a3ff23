import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { AUDIT_LIST, type AuditEvent } from './audit-event.js';
import type { AuditStore } from './audit-store.js';

export interface AuditServiceDeps {
  uow: UnitOfWork;
  audit: AuditStore;
  authz: Authorizer;
  pager: ListPager;
}

/** Reads of the audit trail. There is no write here: records come only from AuditLog. */
export class AuditService {
  constructor(private readonly d: AuditServiceDeps) {}

  /**
   * The records of resources in the subtrees where the caller holds `audit.list`
   * (a caller holding it nowhere gets an empty page, as every list).
   * @throws RpcError INVALID_ARGUMENT (page token, filters).
   */
  async list(p: Principal, req: ListRequest): Promise<ListPage<AuditEvent>> {
    const visibility = await this.d.authz.visibility(p, 'audit.list');
    return this.d.pager.page(AUDIT_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.audit.list(tx, q)),
    );
  }
}
