import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound } from '../../core/rpc-error.js';
import type { AccessStore } from '../access/access-store.js';
import { GROUP_TYPE } from '../groups/group.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import {
  UNUSED_LIST,
  type UnusedAccessStore,
  type UnusedFinding,
  type UnusedKind,
  type UnusedQuery,
} from './unused-access.js';

export interface UnusedAccessServiceDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  pager: ListPager;
  usage: UnusedAccessStore;
  /** Whether a group exists (the access store's question). */
  access: Pick<AccessStore, 'existingGroups'>;
  now?: () => number;
}

const DAY_MS = 24 * 3600 * 1000;
export const DEFAULT_WINDOW_DAYS = 90;
export const MAX_WINDOW_DAYS = 365;

/**
 * A window in whole days, `Nd` (or a bare `N`), from 1 to 365.
 * @throws RpcError INVALID_ARGUMENT (field `window`).
 */
export function windowDays(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_WINDOW_DAYS;
  const m = /^(\d{1,3})d?$/.exec(raw);
  const n = m ? Number(m[1]) : NaN;
  if (!(n >= 1 && n <= MAX_WINDOW_DAYS))
    throw invalidField('window', `must be a number of days from 1 to ${MAX_WINDOW_DAYS}, e.g. 90d`);
  return n;
}

function kindOf(raw: string | undefined): UnusedKind | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'roleBinding' || raw === 'identity') return raw;
  throw invalidField('kind', 'must be roleBinding or identity');
}

/**
 * Unused-access findings: live role bindings that granted no decision, and identities that
 * did not authenticate, within a window (default 90 days), each with the bindings to expire
 * as its one-step remedy. A caller sees only what it could list itself: bindings where it
 * holds `role_bindings.list`, identities where it holds `identity.list` (everything for
 * the admin token), and the remedy names only bindings it may list.
 *
 * Last-used times are written every few seconds (`UsageFlusher`), so a finding may lag the
 * last use by that much; with windows of days, that never changes an answer that matters.
 */
export class UnusedAccessService {
  constructor(private readonly d: UnusedAccessServiceDeps) {}

  /**
   * @throws RpcError INVALID_ARGUMENT (window, kind, uidp), NOT_FOUND (a group the caller
   *   cannot list, or one that does not exist).
   */
  async list(p: Principal, req: ListRequest): Promise<ListPage<UnusedFinding>> {
    if (req.uidp.descendantsOf !== undefined || req.uidp.childrenOf !== undefined)
      throw invalidField('uidp', 'access lists take no uidp filter');
    const days = windowDays(req.filters.window);
    const kind = kindOf(req.filters.kind);
    const group = req.filters.group;
    if (group !== undefined) await this.requireGroup(p, group);
    const view = {
      bindings: await this.d.authz.visibility(p, 'role_bindings.list'),
      identities: await this.d.authz.visibility(p, 'identity.list'),
    };
    // The cutoff moves with the clock; to the second, so pages of one chain agree closely.
    const now = Math.floor((this.d.now ?? Date.now)() / 1000) * 1000;
    const u: UnusedQuery = {
      cutoff: new Date(now - days * DAY_MS),
      ...(group === undefined ? {} : { group }),
      ...(kind === undefined ? {} : { kind }),
      view,
    };
    return this.d.pager.page(
      UNUSED_LIST,
      req,
      { kind: 'all' },
      (q) =>
        this.d.uow.read(async (tx) => {
          const page = await this.d.usage.unusedPage(tx, u, q);
          const ids = page.items.filter((f) => f.kind === 'identity').map((f) => f.uid);
          const held = await this.d.usage.liveBindingsOf(tx, ids, view.bindings);
          const items = page.items.map((f) => ({
            ...f,
            expireBindings: f.kind === 'roleBinding' ? [f.uid] : (held.get(f.uid) ?? []),
          }));
          return { ...page, items };
        }),
      undefined,
      // The count is the caller's own view of bindings and identities (as who-can's).
      JSON.stringify(view),
    );
  }

  private async requireGroup(p: Principal, uid: string): Promise<void> {
    if (!(await this.d.authz.can(p, 'groups.list', uid))) throw notFound(GROUP_TYPE, uid);
    const found = await this.d.uow.read((tx) => this.d.access.existingGroups(tx, [uid]));
    if (!found.has(uid)) throw notFound(GROUP_TYPE, uid);
  }
}
