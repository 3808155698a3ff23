import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import { isSelfOrBelow } from '../../core/uidp.js';
import type { Visibility } from '../../core/visibility.js';
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
    const page = await this.d.pager.page(AUDIT_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.audit.list(tx, q)),
    );
    return { ...page, items: page.items.map((e) => cascadedIn(e, visibility)) };
  }
}

/**
 * `e` with only the cascaded changes whose own records the reader may read: an identity's
 * record must not list the uids of its bindings at groups the reader cannot see.
 */
function cascadedIn(e: AuditEvent, v: Visibility): AuditEvent {
  if (v.kind === 'all' || e.cascaded.length === 0) return e;
  const cascaded = e.cascaded.filter((c) =>
    v.scopes.some((scope) => isSelfOrBelow(scope, c.resourceUid)),
  );
  return cascaded.length === e.cascaded.length ? e : { ...e, cascaded };
}
