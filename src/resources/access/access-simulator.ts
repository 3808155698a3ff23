import { isLive, type Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type ListRequest } from '../../core/list-request.js';
import { queryFingerprint } from '../../core/page-token.js';
import { isSelfOrBelow } from '../../core/uidp.js';
import type { Visibility } from '../../core/visibility.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import { isBuiltInRole, visibleRoleRef } from '../reference-visibility.js';
import type { RoleRef } from '../roles/role.js';
import type { Tx, UnitOfWork } from '../tx.js';
import { parseInput } from '../validate.js';
import { identityDelta, type RawDelta, type WorldBinding } from './access-delta.js';
import { pathDown } from './access-service.js';
import { permitOf } from './change-permits.js';
import { pageInMemory } from './page-in-memory.js';
import {
  SIMULATE_LIST,
  type AccessChange,
  type AccessDelta,
  type ChangeVerdict,
  type SimulateAnswer,
  type SimulatedGrant,
} from './simulate.js';
import { simulateSchema, type SimulateRequest } from './simulate-input.js';
import { SimulatedWorld, type Sight, type WorldFacts } from './simulated-world.js';
import type { SimulationStore } from './simulation-store.js';

export interface AccessSimulatorDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  pager: ListPager;
  simulation: SimulationStore;
}

/** What the caller may see, and a key naming that view (for page tokens' totals). */
interface CallerSight extends Sight {
  /** Whether a binding at `groupUid` would count (one the change set creates). */
  bindingsAt(groupUid: string): boolean;
  self?: string;
  key: string;
}

const sees = (v: Visibility, uid: string): boolean =>
  v.kind === 'all' || v.scopes.some((s) => isSelfOrBelow(s, uid));

/** A delta's sort key: identity, capability, group (a group gains or loses, never both). */
const keyOf = (d: RawDelta): string => `${d.identityUid}\0${d.capability}\0${d.groupUid}`;

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
    const sight = await this.sightOf(p);
    return this.d.uow.snapshot(async (tx) => {
      const { facts, now } = await this.read(tx, req.changes);
      const world = new SimulatedWorld(facts, sight);
      const changes = await this.applyAll(p, req.changes, world, now);
      const counts = (b: WorldBinding) =>
        b.identityUid === sight.self ||
        (b.uid === undefined ? sight.bindingsAt(b.groupUid) : sight.binding(b.uid));
      const before = byIdentity(facts.bindings.filter(counts));
      const after = byIdentity(world.bindings().filter(counts));
      const raw: RawDelta[] = [];
      for (const id of new Set([...before.keys(), ...after.keys()]))
        raw.push(...identityDelta(id, before.get(id) ?? [], after.get(id) ?? [], now));
      const page = await this.page(req, raw, sight.key);
      const names = await this.d.simulation.names(tx, [
        ...new Set(page.items.flatMap((d) => [d.identityUid, d.groupUid])),
      ]);
      const named = (uid: string, visible: boolean) => ({
        uid,
        name: visible ? (names.get(uid) ?? '') : '',
      });
      const deltas: AccessDelta[] = [];
      for (const d of page.items)
        deltas.push(
          await this.shape(p, d, {
            identity: named(
              d.identityUid,
              d.identityUid === sight.self || sight.identity(d.identityUid),
            ),
            group: named(d.groupUid, sight.group(d.groupUid)),
          }),
        );
      return {
        changes,
        deltas,
        ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
        totalCount: page.totalCount,
      };
    });
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
      const permit = await permitOf(this.d.authz, p, c, {
        now,
        bindings: world.bindings().filter((b) => isLive(b, now)),
        roleCapabilities: (uid) => world.roleCapabilities(uid),
      });
      const applied = world.apply(c, index);
      // What names something missing or hidden fails as the real call would, and says no
      // more than that: the permit (which may look at what the caller cannot) is not told.
      if (!applied.applied) {
        out.push({ index, applied: false, permitted: false, reason: applied.reason });
        continue;
      }
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
   * The snapshot's facts: whether what the set names exists, and every binding of every
   * identity it may touch (those it binds or deletes, those whose binding it deletes, those
   * bound to a role it edits, those a group delete carries away or unbinds).
   */
  private async read(
    tx: Tx,
    changes: readonly AccessChange[],
  ): Promise<{ facts: WorldFacts; now: number }> {
    const s = this.d.simulation;
    const groups: string[] = [];
    const identities: string[] = [];
    const roles: string[] = [];
    const bindingUids: string[] = [];
    const edited: string[] = [];
    for (const c of changes) {
      if ('createRoleBinding' in c) {
        groups.push(c.createRoleBinding.groupUid);
        identities.push(c.createRoleBinding.identityUid);
        roles.push(c.createRoleBinding.roleUid);
      } else if ('deleteRoleBinding' in c) bindingUids.push(c.deleteRoleBinding.uid);
      else if ('updateRole' in c) edited.push(c.updateRole.uid);
      else if ('deleteIdentity' in c) identities.push(c.deleteIdentity.uid);
      else groups.push(c.deleteGroup.uid);
    }
    const touched = new Set(identities);
    for (const b of await s.bindings(tx, bindingUids)) touched.add(b.identityUid);
    for (const id of await s.identitiesBoundTo(tx, edited)) touched.add(id);
    for (const c of changes)
      if ('deleteGroup' in c)
        for (const id of await s.identitiesUnder(tx, c.deleteGroup.uid)) touched.add(id);
    const facts: WorldFacts = {
      groups: await s.existingGroups(tx, groups),
      identities: await s.existingIdentities(tx, identities),
      roles: await s.roles(tx, [...roles, ...edited]),
      bindings: await s.bindingsOfIdentities(tx, [...touched]),
    };
    return { facts, now: await s.now(tx) };
  }

  /** Decided once from the caller's grants: `sees(visibility(cap), uid)` is `can(cap, uid)`. */
  private async sightOf(p: Principal): Promise<CallerSight> {
    const a = this.d.authz;
    if (a.isSuperuser(p)) {
      const all = () => true;
      return { group: all, identity: all, role: all, binding: all, bindingsAt: all, key: 'all' };
    }
    const self = p.kind === 'identity' ? p.uid : undefined;
    const [groups, identities, roles, bindings] = await Promise.all([
      a.visibility(p, 'groups.list'),
      a.visibility(p, 'identity.list'),
      a.visibility(p, 'roles.list'),
      a.visibility(p, 'role_bindings.list'),
    ]);
    return {
      group: (uid) => sees(groups, uid),
      identity: (uid) => sees(identities, uid),
      role: (uid) => isBuiltInRole(uid) || sees(roles, uid),
      binding: (uid) => sees(bindings, uid),
      bindingsAt: (uid) => sees(bindings, uid),
      ...(self === undefined ? {} : { self }),
      key: JSON.stringify({ self, groups, identities, roles, bindings }),
    };
  }

  /**
   * One page, through the standard pager: its token is sealed and bound to this change set
   * (a fingerprint of it), its total to the caller's view. The whole delta is computed for
   * every page, so the total is exact on each (`maintained`: neither shared nor carried).
   */
  private page(
    req: SimulateRequest,
    raw: RawDelta[],
    viewKey: string,
  ): Promise<ListPage<RawDelta>> {
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

  /** One delta as the caller may see it. */
  private async shape(
    p: Principal,
    d: RawDelta,
    refs: Pick<AccessDelta, 'identity' | 'group'>,
  ): Promise<AccessDelta> {
    const grant = async (b: WorldBinding): Promise<SimulatedGrant> => ({
      ...(b.uid === undefined ? {} : { bindingUid: b.uid }),
      ...(b.changeIndex === undefined ? {} : { changeIndex: b.changeIndex }),
      role: await this.role(p, b.role),
      groupUid: b.groupUid,
      path: pathDown(b.groupUid, d.groupUid),
      ...(b.expiresAt === undefined ? {} : { expireTime: new Date(b.expiresAt) }),
      ...(b.startsAt === undefined ? {} : { notBefore: new Date(b.startsAt) }),
    });
    return {
      ...refs,
      capability: d.capability,
      effect: d.effect,
      before: await Promise.all(d.before.map(grant)),
      after: await Promise.all(d.after.map(grant)),
      unchangedBelow: d.unchangedBelow,
    };
  }

  private role(p: Principal, r: RoleRef): Promise<RoleRef> {
    return isBuiltInRole(r.uid) ? Promise.resolve(r) : visibleRoleRef(this.d.authz, p, r);
  }
}
