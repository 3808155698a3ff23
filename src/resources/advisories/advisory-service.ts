import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound } from '../../core/rpc-error.js';
import type { ListPager } from '../list-pager.js';
import type { Visibility } from '../../core/visibility.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { ADVISORY_LIST, ADVISORY_TYPE, type Advisory } from './advisory.js';
import type { AdvisoryStore } from './advisory-store.js';
import { SEVERITY_LEVELS, type SeverityLevel } from './cvss.js';

export interface AdvisoryServiceDeps {
  uow: UnitOfWork;
  advisories: AdvisoryStore;
  authz: Authorizer;
  pager: ListPager;
}

const ADVISORY_UID = /^[0-9a-f]{40}$/;
const ALL: Visibility = { kind: 'all' };
const NONE: Visibility = { kind: 'scopes', scopes: [] };

/**
 * Vulnerability advisories, read-only (the importer writes them). Advisories are global
 * data under no group, so access is all-or-nothing: a caller holding `advisories.list`
 * at any group, or a superuser, sees every advisory; any other caller sees none (an
 * empty list, and NOT_FOUND on Get).
 */
export class AdvisoryService {
  constructor(private readonly d: AdvisoryServiceDeps) {}

  private async visibility(p: Principal): Promise<Visibility> {
    const v = await this.d.authz.visibility(p, 'advisories.list');
    return v.kind === 'all' || v.scopes.length > 0 ? ALL : NONE;
  }

  /**
   * @throws RpcError INVALID_ARGUMENT unless `uid` is 40 lowercase hex characters,
   *   NOT_FOUND when missing or when the caller may not list advisories.
   */
  async get(p: Principal, uid: string): Promise<Advisory> {
    if (!ADVISORY_UID.test(uid)) throw invalidField('uid', 'must be 40 lowercase hex characters');
    if ((await this.visibility(p)).kind !== 'all') throw notFound(ADVISORY_TYPE, uid);
    const a = await this.d.uow.replicaRead((tx) => this.d.advisories.get(tx, uid));
    if (!a) throw notFound(ADVISORY_TYPE, uid);
    return a;
  }

  /**
   * Filters: `id` (the OSV id or any alias, e.g. a CVE), `package` and `ecosystem` (the
   * same affected entry; an ecosystem also matches its versioned forms, `Debian` →
   * `Debian:12`), `severity` (LOW, MEDIUM, HIGH, CRITICAL).
   * @throws RpcError INVALID_ARGUMENT for a bad severity, a uidp filter (advisories hang
   *   under no group) or a page token of another query.
   */
  async list(p: Principal, req: ListRequest): Promise<ListPage<Advisory>> {
    for (const [param, v] of [
      ['uidp.children_of', req.uidp.childrenOf],
      ['uidp.descendants_of', req.uidp.descendantsOf],
    ] as const) {
      if (v !== undefined) throw invalidField(param, 'advisories are global and under no group');
    }
    const filters = { ...req.filters };
    if (filters.severity !== undefined) {
      const level = filters.severity.toUpperCase() as SeverityLevel;
      if (!SEVERITY_LEVELS.includes(level)) {
        throw invalidField('severity', `must be one of ${SEVERITY_LEVELS.join(', ')}`);
      }
      filters.severity = level;
    }
    const visibility = await this.visibility(p);
    return this.d.pager.page(ADVISORY_LIST, { ...req, filters }, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.advisories.list(tx, q)),
    );
  }
}
