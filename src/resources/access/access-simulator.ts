import type { Authorizer, Grant } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Condition } from '../../auth/condition.js';
import { isRestricted, type Principal } from '../../auth/principal.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type ListRequest } from '../../core/list-request.js';
import { queryFingerprint } from '../../core/page-token.js';
import { isRpcError } from '../../core/rpc-error.js';
import { ancestryOf, isSelfOrBelow } from '../../core/uidp.js';
import type { Visibility } from '../../core/visibility.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import { requireGroupDeletable } from '../groups/group-service.js';
import { requireIdentityDeletable } from '../identities/identity-service.js';
import { isBuiltInRole, visibleRoleRef } from '../reference-visibility.js';
import { placementViolations } from '../role-bindings/role-binding-input.js';
import {
  referableWithin,
  requireBindingCreatable,
  requireBindingDeletable,
} from '../role-bindings/role-binding-service.js';
import type { BoundWithin } from '../role-bindings/role-binding-store.js';
import { requireRoleUpdatable } from '../roles/role-service.js';
import type { RoleRef } from '../roles/role.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput } from '../validate.js';
import { conditionKey, identityDelta, type RawDelta, type WorldBinding } from './access-delta.js';
import { pathDown } from './access-service.js';
import { pageInMemory } from './page-in-memory.js';
import {
  MAX_SIMULATED_BINDINGS,
  MAX_SIMULATED_IDENTITIES,
  SIMULATE_LIST,
  SIMULATION_STATEMENT_TIMEOUT_MS,
  type AccessChange,
  type AccessDelta,
  type ChangeVerdict,
  type DelegationDelta,
  type PathRef,
  type SimulateAnswer,
  type SimulatedGrant,
} from './simulate.js';
import {
  requireConditionsCompile,
  simulateSchema,
  type SimulateRequest,
} from './simulate-input.js';
import { SimulatedWorld, type Sight } from './simulated-world.js';
import { requirePolicySettable } from '../delegation/delegation-policy.js';
import { delegationEntries, type RawDelegation } from './simulate-delegation.js';
import type { SimulationAsk, SimulationStore } from './simulation-store.js';

export interface AccessSimulatorDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  pager: ListPager;
  simulation: SimulationStore;
}

/** What the caller may see, and a key naming that view (for page tokens' totals). */
interface CallerSight extends Sight {
  /** Where an identity it may not list is referable (absent: it may list every one). */
  referable?: BoundWithin;
  /** Where it may read delegation policies: list and update the identity. */
  policies: SimulationAsk['policies'];
  self?: string;
  key: string;
}

const sees = (v: Visibility, uid: string): boolean =>
  v.kind === 'all' || v.scopes.some((s) => isSelfOrBelow(s, uid));

/**
 * One identity's deltas at one group in one direction, unconditional or under one
 * condition: one entry of the answer.
 */
interface RawEntry {
  kind: 'access';
  identityUid: string;
  groupUid: string;
  effect: RawDelta['effect'];
  condition?: Condition;
  deltas: RawDelta[];
}

type AnyEntry = RawEntry | RawDelegation;

/**
 * An entry's sort key: identity, group, effect, then the condition (unconditional first);
 * delegation entries after every access entry (`~` sorts after a uid's characters).
 */
const keyOf = (e: AnyEntry): string =>
  e.kind === 'access'
    ? `${e.identityUid}\0${e.groupUid}\0${e.effect}\0${e.condition ? conditionKey(e.condition) : ''}`
    : `~${e.subject}\0${e.actor}`;

/** The deltas grouped per identity, group, effect and condition (capabilities in order). */
function entriesOf(raw: readonly RawDelta[]): RawEntry[] {
  const out = new Map<string, RawEntry>();
  for (const d of raw) {
    const e: RawEntry = {
      kind: 'access',
      identityUid: d.identityUid,
      groupUid: d.groupUid,
      effect: d.effect,
      ...(d.condition === undefined ? {} : { condition: d.condition }),
      deltas: [],
    };
    const key = keyOf(e);
    const had = out.get(key) ?? e;
    had.deltas.push(d);
    out.set(key, had);
  }
  return [...out.values()];
}

/** Whether the caller could make a change itself, and if not why. */
type Permit = { permitted: true } | { permitted: false; reason: string };

const grantOf = (b: WorldBinding): Grant => ({
  scope: b.groupUid,
  capabilities: new Set(b.capabilities),
  ...(b.expiresAt === undefined ? {} : { expiresAt: b.expiresAt }),
  ...(b.startsAt === undefined ? {} : { startsAt: b.startsAt }),
});

/** Not expired at `now`: what a real delete weighs (scheduled bindings included). */
const unexpired = (b: WorldBinding, now: number) => b.expiresAt === undefined || now < b.expiresAt;

const byIdentity = (bs: readonly WorldBinding[]) => {
  const m = new Map<string, WorldBinding[]>();
  for (const b of bs) m.set(b.identityUid, [...(m.get(b.identityUid) ?? []), b]);
  return m;
};

/**
 * `access:simulate`: the access delta of a change set. Everything is read in one read-only
 * snapshot (`UnitOfWork.snapshot`): the bindings of every identity the set may touch, and
 * whether what it names exists. The set is applied in memory (`SimulatedWorld`) and each
 * identity's holdings before and after compared with the authorizer's own rule
 * (`identityDelta`, by `grantsAt`). Nothing is written, so there is no audit record and no
 * event: the transaction is read-only, and a write inside it would fail.
 *
 * What the caller learns is what who-can would tell it: only the bindings it may list
 * count (all for the admin token; its own too), before and after; a binding the set
 * creates counts where the caller may list bindings. Names of identities and groups show
 * only where it may list them; roles' as everywhere else (`visibleRoleRef`).
 */
export class AccessSimulator {
  constructor(private readonly d: AccessSimulatorDeps) {}

  /** @throws RpcError INVALID_ARGUMENT (the body, or a page token of another change set). */
  async simulate(p: Principal, body: Record<string, unknown>): Promise<SimulateAnswer> {
    const req = parseInput(simulateSchema, body);
    // The schema checked each capability against the catalogue (setDelegationPolicy's).
    const changeSet = req.changes as AccessChange[];
    requireConditionsCompile(changeSet);
    // What the caller may see is decided before anything is read: the snapshot reads only
    // the facts of what it may see, so a hidden uid costs what a missing one does.
    const sight = await this.sightOf(p);
    const ask = askOf(changeSet, sight);
    return this.d.uow.snapshot(
      async (tx) => {
        const facts = await this.d.simulation.read(tx, ask, {
          identities: MAX_SIMULATED_IDENTITIES,
          bindings: MAX_SIMULATED_BINDINGS,
        });
        const now = facts.now;
        const world = new SimulatedWorld(facts, sight);
        const changes = await this.applyAll(p, changeSet, world, now);
        const counts = (b: WorldBinding) =>
          b.identityUid === sight.self ||
          (b.uid === undefined ? sight.bindingsAt(b.groupUid) : sight.binding(b.uid));
        const before = byIdentity(facts.bindings.filter(counts));
        const after = byIdentity(world.bindings().filter(counts));
        const raw: RawDelta[] = [];
        for (const id of new Set([...before.keys(), ...after.keys()]))
          raw.push(...identityDelta(id, before.get(id) ?? [], after.get(id) ?? [], now));
        const page = await this.page(
          req,
          [...entriesOf(raw), ...delegationEntries(facts.policies, world.policies())],
          sight.key,
        );
        // The names of the page's identities and groups and of their ancestors (a page's
        // entries, times the tree's bounded depth): only the visible ones are ever shown.
        const names = await this.d.simulation.names(tx, [
          ...new Set(
            page.items.flatMap((e) =>
              (e.kind === 'access' ? [e.identityUid, e.groupUid] : [e.subject, e.actor]).flatMap(
                ancestryOf,
              ),
            ),
          ),
        ]);
        const named = (uid: string, visible: boolean): PathRef => {
          if (!visible) return { uid, name: '', path: '' };
          const up: string[] = [names.get(uid) ?? ''];
          // Up while the caller may list the group above: a hidden ancestor is never named.
          for (const a of ancestryOf(uid).slice(1)) {
            if (!sight.group(a)) break;
            up.push(names.get(a) ?? '');
          }
          return { uid, name: up[0]!, path: up.reverse().join('/') };
        };
        const deltas: AccessDelta[] = [];
        const delegationDeltas: DelegationDelta[] = [];
        const identityRef = (uid: string) => named(uid, uid === sight.self || sight.identity(uid));
        for (const e of page.items)
          if (e.kind === 'delegation')
            delegationDeltas.push({
              subject: identityRef(e.subject),
              actor: identityRef(e.actor),
              effect: e.effect,
              ...(e.before ? { before: e.before } : {}),
              ...(e.after ? { after: e.after } : {}),
            });
          else
            deltas.push(
              await this.shape(p, e, req.explain === true, {
                identity: named(
                  e.identityUid,
                  e.identityUid === sight.self || sight.identity(e.identityUid),
                ),
                group: named(e.groupUid, sight.group(e.groupUid)),
              }),
            );
        return {
          changes,
          deltas,
          delegationDeltas,
          ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
          totalCount: page.totalCount,
        };
      },
      { statementTimeoutMs: SIMULATION_STATEMENT_TIMEOUT_MS },
    );
  }

  /** Each change's verdict, applying it to `world` as it goes. */
  private async applyAll(
    p: Principal,
    changes: readonly AccessChange[],
    world: SimulatedWorld,
    now: number,
  ): Promise<ChangeVerdict[]> {
    const out: ChangeVerdict[] = [];
    for (const [index, c] of changes.entries()) {
      const applied = world.applies(c);
      // What names something missing or hidden fails as the real call would, and says no
      // more than that: no check runs on what the caller cannot see.
      if (!applied.applied) {
        out.push({ index, applied: false, permitted: false, reason: applied.reason });
        continue;
      }
      const permit = await this.permitOf(p, c, world, now);
      world.apply(c, index);
      out.push({
        index,
        applied: true,
        permitted: permit.permitted,
        ...(permit.permitted ? {} : { reason: permit.reason }),
      });
    }
    return out;
  }

  /**
   * Whether the caller could make change `c` itself, by the dry run of the real call's own
   * checks (each service's `require…able`), on the world at this point of the set and the
   * caller's grants now: the change set does not change what the caller may do in the
   * middle of it. A group delete is the cascade that makes it possible: the group's own
   * delete (with the groups and roles below), every binding's at or below it, then every
   * identity's below it (weighing the bindings it keeps elsewhere).
   */
  private async permitOf(
    p: Principal,
    c: AccessChange,
    w: SimulatedWorld,
    now: number,
  ): Promise<Permit> {
    const a = this.d.authz;
    const identityFacts = (uid: string, keep: (b: WorldBinding) => boolean) => ({
      uid,
      grants: w
        .bindings()
        .filter((b) => b.identityUid === uid && unexpired(b, now) && keep(b))
        .map(grantOf),
      managedBy: w.identityManager(uid),
    });
    const bindingFacts = (b: WorldBinding) => ({
      // One the set creates would hang below its group: the same decision there.
      uid: b.uid ?? b.groupUid,
      managedBy: b.managedBy ?? null,
    });
    try {
      if ('createRoleBinding' in c) {
        const b = c.createRoleBinding;
        await requireBindingCreatable(a, p, {
          groupUid: b.groupUid,
          roleCapabilities: w.roleCapabilities(b.roleUid) ?? [],
          ...(b.expireTime === undefined ? {} : { expireTime: b.expireTime }),
          now,
        });
      } else if ('deleteRoleBinding' in c) {
        const b = w.binding(c.deleteRoleBinding.uid);
        if (b !== undefined) await requireBindingDeletable(a, p, bindingFacts(b));
      } else if ('updateRole' in c) await requireRoleUpdatable(a, p, c.updateRole);
      else if ('setDelegationPolicy' in c) {
        await requirePolicySettable(a, p, c.setDelegationPolicy.identityUid);
      } else if ('deleteIdentity' in c)
        await requireIdentityDeletable(
          a,
          p,
          identityFacts(c.deleteIdentity.uid, () => true),
        );
      else {
        const uid = c.deleteGroup.uid;
        const g = w.group(uid);
        const within = (b: WorldBinding) => isSelfOrBelow(uid, b.groupUid);
        await requireGroupDeletable(a, p, {
          uid,
          managedBy: g?.managedBy ?? null,
          managedBelow: g?.managedBelow ?? null,
          rolesBelow: g?.rolesBelow ?? false,
        });
        for (const b of w.bindings().filter(within))
          await requireBindingDeletable(a, p, bindingFacts(b));
        for (const id of w.identitiesBelow(uid))
          await requireIdentityDeletable(
            a,
            p,
            identityFacts(id, (b) => !within(b)),
          );
      }
      return { permitted: true };
    } catch (e) {
      if (isRpcError(e)) return { permitted: false, reason: e.message };
      throw e;
    }
  }

  /** Decided once from the caller's grants: `sees(visibility(cap), uid)` is `can(cap, uid)`. */
  private async sightOf(p: Principal): Promise<CallerSight> {
    const a = this.d.authz;
    if (a.isSuperuser(p)) {
      const all = () => true;
      return {
        group: all,
        identity: all,
        role: all,
        binding: all,
        bindingsAt: all,
        binds: all,
        policy: all,
        policies: { listed: { kind: 'all' }, updated: { kind: 'all' } },
        key: 'all',
      };
    }
    // A down-scoped token sees its identity's own only as far as its grants list them.
    const self = p.kind === 'identity' && !isRestricted(p) ? p.uid : undefined;
    const [groups, identities, roles, referable, updates] = await Promise.all([
      a.visibility(p, 'groups.list'),
      a.visibility(p, 'identity.list'),
      a.visibility(p, 'roles.list'),
      referableWithin(a, p),
      a.visibility(p, 'identity.update'),
    ]);
    const bindings = referable.seen;
    return {
      group: (uid) => sees(groups, uid),
      identity: (uid) => sees(identities, uid),
      role: (uid) => isBuiltInRole(uid) || sees(roles, uid),
      binding: (uid) => sees(bindings, uid),
      bindingsAt: (uid) => sees(bindings, uid),
      binds: (uid) => sees(referable.at, uid),
      policy: (uid) => sees(identities, uid) && sees(updates, uid),
      referable,
      policies: { listed: identities, updated: updates },
      ...(self === undefined ? {} : { self }),
      key: JSON.stringify({ self, groups, identities, roles, bindings, updates }),
    };
  }

  /**
   * One page, through the standard pager: its token is sealed and bound to this change set
   * (a fingerprint of it), its total to the caller's view. The whole delta is computed for
   * every page, so the total is exact on each (`maintained`: neither shared nor carried).
   */
  private page(
    req: SimulateRequest,
    raw: AnyEntry[],
    viewKey: string,
  ): Promise<ListPage<AnyEntry>> {
    const size = req.pageSize ? Math.min(req.pageSize, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
    const list: ListRequest = {
      pageSize: size,
      ...(req.pageToken ? { pageToken: req.pageToken } : {}),
      orderBy: SIMULATE_LIST.defaultOrder,
      skip: 0,
      uidp: {},
      filters: { changes: queryFingerprint({ changes: req.changes }) },
    };
    return this.d.pager.page(
      SIMULATE_LIST,
      list,
      { kind: 'all' },
      (q) => Promise.resolve(pageInMemory(raw, keyOf, q)),
      () => true,
      viewKey,
    );
  }

  /**
   * One entry as the caller may see it: its capabilities, where below they do not change,
   * and (with `explain`) each binding granting them before and after, once, with the
   * capabilities it grants.
   */
  private async shape(
    p: Principal,
    e: RawEntry,
    explain: boolean,
    refs: Pick<AccessDelta, 'identity' | 'group'>,
  ): Promise<AccessDelta> {
    const holes = new Map<string, Capability[]>();
    for (const d of e.deltas)
      for (const u of d.unchangedBelow) holes.set(u, [...(holes.get(u) ?? []), d.capability]);
    const grants = async (side: 'before' | 'after'): Promise<SimulatedGrant[]> => {
      if (!explain) return [];
      const by = new Map<WorldBinding, Capability[]>();
      for (const d of e.deltas)
        for (const b of d[side]) by.set(b, [...(by.get(b) ?? []), d.capability]);
      const key = (b: WorldBinding) => b.uid ?? `~${String(b.changeIndex).padStart(8, '0')}`;
      const sorted = [...by].sort(([x], [y]) => (key(x) < key(y) ? -1 : 1));
      return Promise.all(
        sorted.map(async ([b, capabilities]) => ({
          ...(b.uid === undefined ? {} : { bindingUid: b.uid }),
          ...(b.changeIndex === undefined ? {} : { changeIndex: b.changeIndex }),
          role: await this.role(p, b.role),
          groupUid: b.groupUid,
          path: pathDown(b.groupUid, e.groupUid),
          ...(b.expiresAt === undefined ? {} : { expireTime: new Date(b.expiresAt) }),
          ...(b.startsAt === undefined ? {} : { notBefore: new Date(b.startsAt) }),
          capabilities,
          ...(b.condition === undefined ? {} : { condition: b.condition }),
        })),
      );
    };
    return {
      ...refs,
      effect: e.effect,
      capabilities: e.deltas.map((d) => d.capability),
      before: await grants('before'),
      after: await grants('after'),
      unchangedBelow: [...holes]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([groupUid, capabilities]) => ({ groupUid, capabilities })),
      ...(e.condition === undefined ? {} : { condition: e.condition }),
    };
  }

  private role(p: Principal, r: RoleRef): Promise<RoleRef> {
    return isBuiltInRole(r.uid) ? Promise.resolve(r) : visibleRoleRef(this.d.authz, p, r);
  }
}

/**
 * What the snapshot reads for `changes`: only what `sight` shows of what they name, each
 * uid once. A change naming something hidden (or misplaced) asks for nothing, exactly as
 * one naming a missing uid finds nothing: both then fail alike (`SimulatedWorld.applies`).
 * One exception, the real create's: a hidden identity a binding names is asked for as
 * `referred`, and read only if bound where the caller binds, by a binding it may list.
 */
function askOf(changes: readonly AccessChange[], sight: CallerSight): SimulationAsk {
  const groups = new Set<string>();
  const identities = new Set<string>();
  const referred = new Set<string>();
  const roles = new Set<string>();
  const bindings = new Set<string>();
  const editedRoles = new Set<string>();
  const deletedGroups = new Set<string>();
  const seen = (set: Set<string>, uid: string, visible: boolean) => {
    if (visible) set.add(uid);
  };
  for (const c of changes) {
    if ('createRoleBinding' in c) {
      const { groupUid, identityUid, roleUid } = c.createRoleBinding;
      if (placementViolations(groupUid, identityUid, roleUid).length > 0) continue;
      seen(groups, groupUid, sight.group(groupUid));
      seen(identities, identityUid, sight.identity(identityUid));
      // Hidden: read only if bound where the caller binds and sees it (its binding names it).
      seen(referred, identityUid, !sight.identity(identityUid) && sight.referable !== undefined);
      seen(roles, roleUid, sight.role(roleUid));
    } else if ('deleteRoleBinding' in c) {
      const uid = c.deleteRoleBinding.uid;
      seen(bindings, uid, sight.binding(uid));
    } else if ('updateRole' in c) {
      const uid = c.updateRole.uid;
      seen(roles, uid, sight.role(uid));
      // A built-in is never edited (the verdict says so): its holders are not read.
      seen(editedRoles, uid, sight.role(uid) && !isBuiltInRole(uid));
    } else if ('deleteIdentity' in c) {
      const uid = c.deleteIdentity.uid;
      seen(identities, uid, sight.identity(uid));
    } else if ('setDelegationPolicy' in c) {
      const uid = c.setDelegationPolicy.identityUid;
      seen(identities, uid, sight.identity(uid));
    } else {
      const uid = c.deleteGroup.uid;
      seen(groups, uid, sight.group(uid));
      seen(deletedGroups, uid, sight.group(uid));
    }
  }
  return {
    groups: [...groups],
    identities: [...identities],
    roles: [...roles],
    bindings: [...bindings],
    editedRoles: [...editedRoles],
    deletedGroups: [...deletedGroups],
    policies: sight.policies,
    ...(sight.referable === undefined || referred.size === 0
      ? {}
      : { referred: { identities: [...referred], within: sight.referable } }),
  };
}
