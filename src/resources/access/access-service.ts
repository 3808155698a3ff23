import { isLive, type Authorizer } from '../../auth/authorizer.js';
import { spanEvent } from '../../tracing/spans.js';
import type { Capability } from '../../auth/capabilities.js';
import { isRestricted, type Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound } from '../../core/rpc-error.js';
import { ancestryOf, isRootUid, isSelfOrBelow } from '../../core/uidp.js';
import { GROUP_TYPE } from '../groups/group.js';
import { IDENTITY_TYPE } from '../identities/identity.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage, PageQuery, StorePage } from '../list-types.js';
import { isBuiltInRole, visibleRoleRef } from '../reference-visibility.js';
import type { PathBook } from '../names/path-book.js';
import type { ReadCache } from '../read-cache.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput } from '../validate.js';
import {
  WHAT_CAN_LIST,
  WHO_CAN_LIST,
  type AccessExtras,
  type CheckRequest,
  type CheckResult,
  type Coverage,
  type ExplainedCondition,
  type GrantProof,
  type GroupAccess,
  type HeldBinding,
  type Holder,
  type PendingGrant,
} from './access.js';
import { AccessPaths } from './access-paths.js';
import { batchCheckSchema, capabilitySchema, checkSchema, plainCheck } from './access-input.js';
import { asksAbout, explainAsked } from './asked-request.js';
import type { AccessStore, BindingGrant, SeenBy } from './access-store.js';
import {
  actingForOf,
  checkActingFor,
  conditionalGrantsOf,
  conditionalHolders,
  readableDelegations,
  withConditionalRolePaths,
} from './access-extras.js';
import { grantProofs } from './grant-proofs.js';
import { pageInMemory } from './page-in-memory.js';
import type { CheckCache, RememberedSelfChecks } from './remembered-self-checks.js';

export interface AccessServiceDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  pager: ListPager;
  access: AccessStore;
  /** The read caches: here, whether a group exists (absent: the database is asked). */
  cache?: CheckCache;
  /** What a check asking about the caller itself may answer from memory (absent: none). */
  selfChecks?: RememberedSelfChecks;
  /**
   * Who-can's first pages, with their bindings, by question and by what the caller may see
   * (absent: none). Any change to bindings or roles forgets them all, and each lasts only
   * until the first binding it counted expires (`validUntilOf`).
   */
  holders?: ReadCache<HoldersRead>;
  /** Paths of names beside the uids of answers (absent: uids alone). */
  paths?: PathBook;
}

/** One page of holders as the store read it, and the bindings that make them holders. */
export interface HoldersRead {
  page: StorePage<string>;
  bindings: BindingGrant[];
}

/** Until when a who-can read stays true with no write: its first expiring binding's instant. */
export function validUntilOf(r: HoldersRead): number {
  return r.page.totalUntil ?? Number.POSITIVE_INFINITY;
}

/** The bindings of `all` that grant now (scheduled ones not yet started do not). */
function live(all: BindingGrant[]): BindingGrant[] {
  const now = Date.now();
  return all.filter((b) => isLive(b, now));
}

/** A page of an access list, and how much of the path its answer counts. */
export type AccessPage<T> = ListPage<T> & Coverage & AccessExtras;

export { pathDown } from './grant-proofs.js';

const sorted = (caps: Iterable<Capability>): Capability[] => [...new Set(caps)].sort();

/**
 * "Can X do C at G, and why?", "who can?", "what can X do?", answered from the same live
 * bindings the authorizer reads.
 *
 * What a caller learns is what it could list itself: an answer is computed only from the
 * bindings that count for it (all of them for the admin token and system callers; its own
 * bindings for an identity asking about itself; otherwise those it holds
 * `role_bindings.list` for), about identities it may list (or itself) and at groups it may
 * list. So a binding the caller cannot see never shows, not even as a bare "allowed".
 *
 * An answer is a question, not a use: the bindings it cites are not recorded as used (last
 * used), whoever asks, even about itself. Only the authorizer's decisions on the caller's
 * own request are uses (here: of the caller's bindings that let it see what it asks about),
 * so nobody keeps another's dormant binding off the unused-access findings by asking.
 */
export class AccessService {
  private readonly named: AccessPaths;

  constructor(private readonly d: AccessServiceDeps) {
    this.named = new AccessPaths(d.paths);
  }

  /**
   * One check: `checkAll`'s rules for a single question, with at most one database round
   * trip (existence of both, and the identity's bindings at the group or above; none for a
   * self check the read caches can answer) after the authorizer's in-memory decisions, and
   * one more for the names of the answer's paths. A self check answered from memory is
   * answered with its names too (remembered named; see RememberedSelfChecks), so the hot
   * "may I?" of a workload costs no database read.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (identity or group the caller cannot see).
   */
  async check(p: Principal, body: Record<string, unknown>): Promise<CheckResult> {
    const req = plainCheck(body) ?? parseInput(checkSchema, body);
    const identityUid = this.identityOrSelf(p, req.identityUid, 'identityUid');
    const self = this.isSelf(p, identityUid);
    // A check naming a request is answered afresh: what is remembered answers without one.
    const known =
      self && !asksAbout(req)
        ? this.d.selfChecks?.lookup(identityUid, req.groupUid, req.capability)
        : undefined;
    // The proof walk's steps as events on the request's span (tracing on): their times show
    // which step a slow check spent its time in.
    spanEvent('access.remembered', { 'arbor.access.hit': known !== undefined });
    if (known !== undefined && 'answer' in known) return known.answer;
    if (known?.sketch !== undefined) {
      const t = { ...req, identityUid };
      const again = await known.sketch.again((b) =>
        explainAsked(this.d.authz, b.uid, b.condition!, t),
      );
      // Kept anew: where the group's path was not yet remembered when it was kept, it is
      // now, and the answer may be served whole from the next check on.
      if (again !== undefined) return known.keep(again);
    }
    if (!self && !(await this.d.authz.can(p, 'identity.list', identityUid)))
      throw notFound(IDENTITY_TYPE, identityUid);
    const listable = await this.d.authz.can(p, 'groups.list', req.groupUid);
    spanEvent('access.authorized', { 'arbor.access.group_listable': listable });
    const facts =
      known?.facts ??
      (await this.d.uow.read((tx) => this.d.access.checkFacts(tx, identityUid, req.groupUid)));
    spanEvent('access.bindings', { 'arbor.access.bindings': facts.bindings.length });
    // The order of checkAll's refusals: identity, then a group the caller cannot list,
    // then a group that is gone (see there).
    if (!self && !facts.identityExists) throw notFound(IDENTITY_TYPE, identityUid);
    if (!self && !listable) throw notFound(GROUP_TYPE, req.groupUid);
    if (!facts.groupExists && listable) throw notFound(GROUP_TYPE, req.groupUid);
    const onPath = answerable(facts.groupExists, listable) ? facts.bindings : [];
    const result = await this.answer(p, { ...req, identityUid }, onPath);
    spanEvent('access.decision', {
      'arbor.access.allowed': result.allowed,
      'arbor.access.capability': req.capability,
    });
    const [named] = await this.named.checks(p, [result]);
    return known === undefined ? named! : known.keep(named!);
  }

  /** Up to 100 checks; all answer or the call fails (fields prefixed `checks[i].`). */
  async batchCheck(p: Principal, body: Record<string, unknown>): Promise<CheckResult[]> {
    const { checks } = parseInput(batchCheckSchema, body);
    return this.named.checks(p, await this.checkAll(p, checks, (i) => `checks[${i}].identityUid`));
  }

  /**
   * The identities holding `capability` at `group` by a binding the caller may list (or
   * its own), by uid.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (a group the caller cannot list).
   */
  async whoCan(p: Principal, req: ListRequest): Promise<AccessPage<Holder>> {
    noUidp(req);
    const group = req.filters.group;
    if (group === undefined) throw invalidField('group', 'a group uid is required');
    const cap = parseInput(capabilitySchema, req.filters.capability, 'capability');
    await this.requireGroup(p, group);
    const seen = await this.seenBy(p);
    const seenKey = JSON.stringify(seen);
    const coverage = await this.coverage(p, group);
    const page = await this.d.pager.page(
      WHO_CAN_LIST,
      req,
      { kind: 'all' },
      async (q) => {
        const { page, bindings } = await this.holders(group, cap, seen, seenKey, q);
        const byIdentity = new Map<string, BindingGrant[]>();
        for (const b of bindings)
          byIdentity.set(b.identityUid, [...(byIdentity.get(b.identityUid) ?? []), b]);
        const items: Holder[] = await Promise.all(
          page.items.map(async (identityUid) => ({
            identityUid,
            grants: await grantProofs(this.d.authz, p, byIdentity.get(identityUid) ?? [], group),
          })),
        );
        return { ...page, items };
      },
      // The count is the caller's own: shared (docs/adr/0003) only between first pages
      // asked with the same view of bindings and identities, and carried by the cursor.
      undefined,
      seenKey,
    );
    const conditional =
      req.pageToken === undefined
        ? await conditionalHolders(this.d, p, group, cap, seen)
        : undefined;
    const delegations = await readableDelegations(this.d, p, cap, [
      ...page.items.map((h) => h.identityUid),
      ...(conditional?.holders ?? []).map((h) => h.identityUid),
    ]);
    return {
      ...page,
      items: await this.named.holders(p, page.items),
      ...coverage,
      ...(conditional !== undefined && conditional.holders.length > 0
        ? { conditionalHolders: await this.named.holders(p, conditional.holders) }
        : {}),
      ...(conditional?.more ? { conditionalHoldersTruncated: true as const } : {}),
      ...(delegations.length > 0 ? { delegations } : {}),
    };
  }

  /**
   * A page of identities in SQL, then the bindings of those alone: the first page of 10,000
   * holders reads one page of bindings, not all of them. A first page comes from the
   * holders cache when it may serve; one read for the cache is counted afresh (not taken
   * from the pager's shared count), so that it knows when its first binding expires.
   */
  private holders(
    group: string,
    cap: Capability,
    seen: SeenBy,
    seenKey: string,
    q: PageQuery,
  ): Promise<HoldersRead> {
    const read = (q: PageQuery) =>
      this.d.uow.read(async (tx) => {
        const page = await this.d.access.holdersPage(tx, group, cap, seen, q);
        const bindings = await this.d.access.bindingsGranting(tx, group, cap, seen, page.items);
        return { page, bindings };
      });
    const cache = this.d.holders;
    if (cache === undefined || q.after !== undefined) return read(q);
    const key = [group, cap, seenKey, q.order.direction, q.pageSize, q.skip].join('\0');
    return cache.read(key, (primary) => {
      if (!primary) return read(q);
      const { knownTotal: _, ...counted } = q;
      return read(counted);
    });
  }

  /**
   * `counted` as a filter the database applies (who-can pages in SQL): the same rule, since
   * `can(p, cap, uid)` holds exactly when `uid` lies in `visibility(p, cap)`. Who-can names a
   * holder by uid only, which listing the binding shows anyway (as a hydrated reference to
   * an identity the caller cannot list): so a holder counts by its binding alone, whether
   * or not the caller may list the identity. Filtering on that too made a folder owner's
   * answer a silent part of what its own binding list shows.
   */
  private async seenBy(p: Principal): Promise<SeenBy> {
    const everyIdentity = { kind: 'all' } as const;
    if (this.d.authz.isSuperuser(p))
      return { bindings: { kind: 'all' }, identities: everyIdentity };
    return {
      ...(p.kind === 'identity' && !isRestricted(p) ? { self: p.uid } : {}),
      bindings: await this.d.authz.visibility(p, 'role_bindings.list'),
      identities: everyIdentity,
    };
  }

  /**
   * What `identity` (default: the caller) holds, one item per group it is bound at.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (an identity the caller cannot list).
   */
  async whatCan(p: Principal, req: ListRequest): Promise<AccessPage<GroupAccess>> {
    noUidp(req);
    const identityUid = this.identityOrSelf(p, req.filters.identity, 'identity');
    await this.requireIdentity(p, identityUid);
    const bindings = await this.counted(
      p,
      live(await this.d.uow.read((tx) => this.d.access.bindingsOf(tx, identityUid))),
    );
    const groups = [...new Set(bindings.map((b) => b.groupUid))];
    const whole = this.isSelf(p, identityUid) || this.d.authz.isSuperuser(p);
    // A conditional binding grants only on a decision where its condition holds: listed
    // apart, never among what the identity holds.
    const unconditional = bindings.filter((b) => b.condition === undefined);
    const items: GroupAccess[] = [];
    for (const groupUid of groups) {
      const here = unconditional.filter((b) => b.groupUid === groupUid);
      const reaching = unconditional.filter((b) => isSelfOrBelow(b.groupUid, groupUid));
      const conditional = await conditionalGrantsOf(
        this.d.authz,
        p,
        bindings.filter((b) => b.groupUid === groupUid && b.condition !== undefined),
      );
      items.push({
        groupUid,
        bindings: await Promise.all(
          here.map(async (b) => ({
            bindingUid: b.uid,
            role: await visibleRoleRef(this.d.authz, p, b.role),
          })),
        ),
        capabilities: sorted(here.flatMap((b) => b.capabilities)),
        effectiveCapabilities: sorted(reaching.flatMap((b) => b.capabilities)),
        ...(conditional.length > 0 ? { conditional } : {}),
        ...(whole ? {} : await this.coverage(p, groupUid)),
      });
    }
    const page = await this.d.pager.page(
      WHAT_CAN_LIST,
      req,
      { kind: 'all' },
      (q) => Promise.resolve(pageInMemory(items, (i) => i.groupUid, q)),
      () => true,
    );
    const actingFor = actingForOf(p);
    const named = {
      ...page,
      items: await withConditionalRolePaths(
        this.d.paths,
        p,
        await this.named.groups(p, page.items),
      ),
      ...(actingFor === undefined ? {} : { actingFor }),
    };
    // The list is whole only where the caller may list every binding the identity may
    // hold: in its organization, or anywhere for a root-level identity (bound in any).
    if (whole || (!isRootUid(identityUid) && !(await this.coverage(p, identityUid)).partial))
      return named;
    return { ...named, partial: true };
  }

  /**
   * How much of `groupUid`'s path the bindings that count for `p` cover (`Coverage`):
   * whole where it may list bindings at the organization's root, else counted from the
   * topmost group on the path where it may. From its grants alone, root first, stopping at
   * the first group it may list bindings at (at most the path's depth, in memory).
   */
  private async coverage(p: Principal, groupUid: string): Promise<Coverage> {
    if (this.d.authz.isSuperuser(p)) return {};
    const down = ancestryOf(groupUid).reverse();
    for (const [i, g] of down.entries())
      if (await this.d.authz.can(p, 'role_bindings.list', g))
        return i === 0 ? {} : { partial: true, countedFrom: g };
    return { partial: true };
  }

  private async checkAll(
    p: Principal,
    reqs: readonly CheckRequest[],
    fieldOf: (i: number) => string,
  ): Promise<CheckResult[]> {
    const targets = reqs.map((r, i) => ({
      ...r,
      identityUid: this.identityOrSelf(p, r.identityUid, fieldOf(i)),
    }));
    const identities = [...new Set(targets.map((t) => t.identityUid))];
    for (const uid of identities) await this.requireIdentity(p, uid);
    const listable = new Map<string, boolean>();
    for (const t of targets) {
      if (listable.has(t.groupUid)) continue;
      listable.set(t.groupUid, await this.d.authz.can(p, 'groups.list', t.groupUid));
    }
    for (const t of targets)
      if (!this.isSelf(p, t.identityUid) && !listable.get(t.groupUid))
        throw notFound(GROUP_TYPE, t.groupUid);
    const held = new Map<string, BindingGrant[]>();
    const existing = await this.d.uow.read(async (tx) => {
      // Unexpired, scheduled ones included: `answer` keeps the live ones as the grants.
      for (const uid of identities) held.set(uid, await this.d.access.bindingsOf(tx, uid));
      return this.d.access.existingGroups(tx, [...listable.keys()]);
    });
    // A group that is gone is NOT_FOUND, as its Get is, to whoever may list groups there.
    // An identity asking about itself where it may not is answered from its own bindings
    // on the path alone (`answerable`), so it cannot tell a group it cannot see from one
    // that does not exist.
    for (const t of targets)
      if (!existing.has(t.groupUid) && listable.get(t.groupUid))
        throw notFound(GROUP_TYPE, t.groupUid);
    return Promise.all(
      targets.map(async (t) => {
        const asked = answerable(existing.has(t.groupUid), listable.get(t.groupUid) === true);
        const onPath = (asked ? (held.get(t.identityUid) ?? []) : []).filter((b) =>
          isSelfOrBelow(b.groupUid, t.groupUid),
        );
        return this.answer(p, t, onPath);
      }),
    );
  }

  /**
   * One check's answer from the identity's unexpired bindings on the group's path: the live
   * granting ones as proofs; when none grants, the rest of the live ones as the reason,
   * nearest first; and the scheduled ones that would grant once started (`pending`). All
   * only of the bindings that count for the caller (`counted`), so an answer names no
   * binding the caller could not list, and a role's capabilities only where it may list it.
   */
  private async answer(
    p: Principal,
    t: CheckRequest & { identityUid: string },
    unexpired: BindingGrant[],
  ): Promise<CheckResult> {
    const now = Date.now();
    const counted = await this.counted(p, unexpired);
    const seen = counted.filter((b) => isLive(b, now));
    const holding = seen.filter((b) => b.capabilities.includes(t.capability));
    // A conditional binding grants here only where its condition holds for this check.
    const explained = new Map<string, ExplainedCondition>();
    for (const b of holding)
      if (b.condition !== undefined)
        explained.set(b.uid, await explainAsked(this.d.authz, b.uid, b.condition, t));
    const granting = holding.filter((b) => explained.get(b.uid)?.result !== false);
    const withCondition = (g: GrantProof): GrantProof => {
      const c = explained.get(g.bindingUid);
      return c === undefined ? g : { ...g, condition: c };
    };
    const grants = (await grantProofs(this.d.authz, p, granting, t.groupUid)).map(withCondition);
    const failed = holding.filter((b) => explained.get(b.uid)?.result === false);
    const conditional =
      grants.length > 0
        ? []
        : (await grantProofs(this.d.authz, p, failed, t.groupUid)).map(withCondition);
    const nearest: HeldBinding[] = [];
    if (grants.length === 0) {
      const near = [...seen].sort((x, y) => y.groupUid.length - x.groupUid.length);
      for (const [i, proof] of (
        await grantProofs(this.d.authz, p, near, t.groupUid, false)
      ).entries()) {
        const b = near[i] as BindingGrant;
        const visible = proof.role.name !== '' || isBuiltInRole(b.role.uid);
        nearest.push({ ...proof, roleCapabilities: visible ? sorted(b.capabilities) : [] });
      }
    }
    const pending = await this.pendingGrants(p, counted, t, now);
    return {
      identityUid: t.identityUid,
      capability: t.capability,
      groupUid: t.groupUid,
      allowed: grants.length > 0,
      grants,
      nearest,
      ...(pending.length > 0 ? { pending } : {}),
      ...(conditional.length > 0 ? { conditional } : {}),
      ...checkActingFor(p, t.capability),
      // An identity's own bindings all count when it asks about itself: whole.
      ...(this.isSelf(p, t.identityUid) ? {} : await this.coverage(p, t.groupUid)),
    };
  }

  /** Those of `counted` not started at `now` that would grant `t`, soonest first. */
  private async pendingGrants(
    p: Principal,
    counted: BindingGrant[],
    t: CheckRequest & { identityUid: string },
    now: number,
  ): Promise<PendingGrant[]> {
    const later = counted
      .filter((b) => b.startsAt !== undefined && b.startsAt > now)
      .filter((b) => b.capabilities.includes(t.capability))
      .sort((x, y) => x.startsAt! - y.startsAt! || (x.uid < y.uid ? -1 : 1));
    const proofs = await grantProofs(this.d.authz, p, later, t.groupUid, false);
    return proofs.map((proof, i) => {
      const b = later[i] as BindingGrant;
      return {
        ...proof,
        notBefore: new Date(b.startsAt!),
        ...(b.expiresAt !== undefined ? { expireTime: new Date(b.expiresAt) } : {}),
      };
    });
  }

  /**
   * A down-scoped token is never "itself" here: what its identity's own bindings say is
   * answered only as far as the token's grants let it list them, like anyone else's.
   */
  private isSelf(p: Principal, identityUid: string): boolean {
    return p.kind === 'identity' && p.uid === identityUid && !isRestricted(p);
  }

  private identityOrSelf(p: Principal, uid: string | undefined, field: string): string {
    if (uid !== undefined) return uid;
    if (p.kind === 'identity') return p.uid;
    throw invalidField(field, 'an identity uid is required when the caller is not an identity');
  }

  /** @throws RpcError NOT_FOUND for an identity that is missing or the caller cannot list. */
  private async requireIdentity(p: Principal, uid: string): Promise<void> {
    if (this.isSelf(p, uid)) return;
    if (!(await this.d.authz.can(p, 'identity.list', uid))) throw notFound(IDENTITY_TYPE, uid);
    const exists = await this.d.uow.read((tx) => this.d.access.identityExists(tx, uid));
    if (!exists) throw notFound(IDENTITY_TYPE, uid);
  }

  /**
   * From the group cache when it may serve (as a Get of the group would be).
   * @throws RpcError NOT_FOUND for a group the caller cannot list, or that does not exist.
   */
  private async requireGroup(p: Principal, uid: string): Promise<void> {
    if (!(await this.d.authz.can(p, 'groups.list', uid))) throw notFound(GROUP_TYPE, uid);
    const c = this.d.cache;
    const exists =
      c === undefined
        ? (await this.d.uow.read((tx) => this.d.access.existingGroups(tx, [uid]))).has(uid)
        : (await c.groups.read(uid, () => c.loadGroup(uid))) !== undefined;
    if (!exists) throw notFound(GROUP_TYPE, uid);
  }

  /** The bindings that may count toward an answer to `p` (see the class comment). */
  private async counted(p: Principal, bindings: BindingGrant[]): Promise<BindingGrant[]> {
    // Its own bindings all count for the caller: a self check asks nothing more.
    if (this.d.authz.isSuperuser(p) || bindings.every((b) => this.isSelf(p, b.identityUid)))
      return bindings;
    const keep = await Promise.all(
      bindings.map(
        async (b) =>
          this.isSelf(p, b.identityUid) || this.d.authz.can(p, 'role_bindings.list', b.uid),
      ),
    );
    return bindings.filter((_, i) => keep[i]);
  }
}

/**
 * Whether a check is answered from the bindings on the asked group's path: always for a
 * group the caller may not list (only an identity asking about itself gets this far), so
 * that the answer never depends on whether that group exists: its
 * own bindings above grant there as the authorizer would, existing or not. A group the
 * caller may list is answered only while it exists (a missing one is NOT_FOUND first).
 */
function answerable(groupExists: boolean, listable: boolean): boolean {
  return groupExists || !listable;
}

/** Access lists are keyed by the asked group or identity, not by a subtree. */
function noUidp(req: ListRequest): void {
  if (req.uidp.descendantsOf !== undefined || req.uidp.childrenOf !== undefined)
    throw invalidField('uidp', 'access lists take no uidp filter');
}
