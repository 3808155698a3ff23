import { grantsAt, type Grant } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Condition } from '../../auth/condition.js';
import { ancestryOf, isStrictlyBelow, parentOf } from '../../core/uidp.js';
import type { RoleRef } from '../roles/role.js';
import type { DeltaEffect } from './simulate.js';

/** A binding in a simulated world: an existing one (`uid`) or one the change set creates. */
export interface WorldBinding {
  uid?: string;
  changeIndex?: number;
  groupUid: string;
  identityUid: string;
  role: RoleRef;
  capabilities: readonly Capability[];
  expiresAt?: number;
  /** From this instant it grants (its `notBefore`); absent: from creation. */
  startsAt?: number;
  /** The Kubernetes object managing it; absent or null: none (one the set creates). */
  managedBy?: string | null;
  /**
   * A conditional binding's condition: it grants nothing unconditionally, and its own
   * deltas are conditional ones (`identityDelta`).
   */
  condition?: Condition;
}

/** One identity's change at one group, before it is shaped for the caller. */
export interface RawDelta {
  identityUid: string;
  capability: Capability;
  groupUid: string;
  effect: DeltaEffect;
  /** The bindings granting the capability at the group, before and after. */
  before: WorldBinding[];
  after: WorldBinding[];
  unchangedBelow: string[];
  /** A conditional delta: held (or no longer held) only when this condition holds. */
  condition?: Condition;
}

/** One identity's bindings as the authorizer's grants, indexed by the group they are at. */
class GrantIndex {
  readonly #at = new Map<string, { grant: Grant; binding: WorldBinding }[]>();

  constructor(
    bindings: readonly WorldBinding[],
    private readonly now: number,
  ) {
    for (const b of bindings) {
      const grant: Grant = {
        scope: b.groupUid,
        capabilities: new Set(b.capabilities),
        ...(b.expiresAt === undefined ? {} : { expiresAt: b.expiresAt }),
        ...(b.startsAt === undefined ? {} : { startsAt: b.startsAt }),
      };
      const here = this.#at.get(b.groupUid) ?? [];
      here.push({ grant, binding: b });
      this.#at.set(b.groupUid, here);
    }
  }

  /** The bindings granting `cap` at `uid`: the authorizer's rule, over its ancestry only. */
  granting(cap: Capability, uid: string): WorldBinding[] {
    const out: WorldBinding[] = [];
    for (const a of ancestryOf(uid))
      for (const e of this.#at.get(a) ?? [])
        if (grantsAt(e.grant, cap, uid, this.now)) out.push(e.binding);
    return out;
  }

  holds(cap: Capability, uid: string): boolean {
    return ancestryOf(uid).some((a) =>
      (this.#at.get(a) ?? []).some((e) => grantsAt(e.grant, cap, uid, this.now)),
    );
  }

  /** What any of the bindings may grant, live or not (the capabilities worth comparing). */
  capabilities(): Set<Capability> {
    const out = new Set<Capability>();
    for (const es of this.#at.values())
      for (const e of es) for (const c of e.grant.capabilities) out.add(c);
    return out;
  }

  /**
   * The tops of the subtrees where `cap` is held: a group a binding is at where it is held
   * and its parent is not. The held set is the union of their subtrees.
   */
  tops(cap: Capability): string[] {
    const out: string[] = [];
    for (const g of this.#at.keys()) {
      if (!this.holds(cap, g)) continue;
      const up = parentOf(g);
      if (up === undefined || !this.holds(cap, up)) out.push(g);
    }
    return out.sort();
  }
}

const byKey = (a: WorldBinding, b: WorldBinding): number => {
  const ka = a.uid ?? `~${String(a.changeIndex).padStart(8, '0')}`;
  const kb = b.uid ?? `~${String(b.changeIndex).padStart(8, '0')}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** The uids of sorted `tops` strictly below `uid` (a binary search, then a scan). */
function below(tops: readonly string[], uid: string): string[] {
  const prefix = `${uid}/`;
  let lo = 0;
  let hi = tops.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tops[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  const out: string[] = [];
  for (let i = lo; i < tops.length && isStrictlyBelow(uid, tops[i]!); i++) out.push(tops[i]!);
  return out;
}

/** A condition's identity: two bindings with the same one grant under the same decisions. */
export const conditionKey = (c: Condition): string =>
  JSON.stringify([c.expression, c.title ?? '', c.description ?? '']);

/**
 * The changes between two indexes of one identity's holdings: where `after` holds a
 * capability that `before` does not (GAIN), or the other way round (LOSE). Where it holds a
 * capability is a union of subtrees; the groups that gain it are exactly the tops after that
 * were not held before (a group below one held before was held too), each with the tops
 * before beneath it as holes, and the other way round for what it loses.
 */
function between(
  identityUid: string,
  before: GrantIndex,
  after: GrantIndex,
  effects: ReadonlySet<DeltaEffect>,
  condition: Condition | undefined,
): RawDelta[] {
  const caps = [...new Set([...before.capabilities(), ...after.capabilities()])].sort();
  const out: RawDelta[] = [];
  const tagged = condition === undefined ? {} : { condition };
  for (const capability of caps) {
    const tops0 = before.tops(capability);
    const tops1 = after.tops(capability);
    if (effects.has('GAIN'))
      for (const g of tops1)
        if (!before.holds(capability, g))
          out.push({
            identityUid,
            capability,
            groupUid: g,
            effect: 'GAIN',
            before: [],
            after: after.granting(capability, g).sort(byKey),
            unchangedBelow: below(tops0, g),
            ...tagged,
          });
    if (effects.has('LOSE'))
      for (const g of tops0)
        if (!after.holds(capability, g))
          out.push({
            identityUid,
            capability,
            groupUid: g,
            effect: 'LOSE',
            before: before.granting(capability, g).sort(byKey),
            after: [],
            unchangedBelow: below(tops1, g),
            ...tagged,
          });
  }
  return out;
}

const GAIN: ReadonlySet<DeltaEffect> = new Set(['GAIN']);
const LOSE: ReadonlySet<DeltaEffect> = new Set(['LOSE']);
const BOTH: ReadonlySet<DeltaEffect> = new Set(['GAIN', 'LOSE']);

/**
 * What changes for one identity between two sets of its bindings, at `now`.
 *
 * Unconditional deltas count only unconditional bindings: a condition is decided per
 * request, which a simulation has none of (fail closed, as who-can).
 *
 * Conditional deltas, one set per distinct condition C: the identity gains a capability at
 * a group "when C" where, after, a binding with C grants it there, and before none did,
 * and it is held there unconditionally neither before nor after (an unconditional change
 * is already said; a conditional grant where the unconditional one stays adds nothing).
 * Each held set is a union of subtrees, so the GAINs when C are the tops of what C grants
 * after that are held by none of (C before, unconditional before, unconditional after),
 * with the tops of those beneath as holes; a LOSE when C the other way round.
 */
export function identityDelta(
  identityUid: string,
  beforeBindings: readonly WorldBinding[],
  afterBindings: readonly WorldBinding[],
  now: number,
): RawDelta[] {
  const plain = (bs: readonly WorldBinding[]) => bs.filter((b) => b.condition === undefined);
  const u0 = plain(beforeBindings);
  const u1 = plain(afterBindings);
  const out = between(
    identityUid,
    new GrantIndex(u0, now),
    new GrantIndex(u1, now),
    BOTH,
    undefined,
  );
  const conditions = new Map<string, Condition>();
  for (const b of [...beforeBindings, ...afterBindings])
    if (b.condition !== undefined) conditions.set(conditionKey(b.condition), b.condition);
  for (const [key, condition] of [...conditions].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const under = (bs: readonly WorldBinding[]) =>
      bs.filter((b) => b.condition !== undefined && conditionKey(b.condition) === key);
    const c0 = under(beforeBindings);
    const c1 = under(afterBindings);
    out.push(
      ...between(
        identityUid,
        new GrantIndex([...c0, ...u0, ...u1], now),
        new GrantIndex(c1, now),
        GAIN,
        condition,
      ),
      ...between(
        identityUid,
        new GrantIndex(c0, now),
        new GrantIndex([...c1, ...u0, ...u1], now),
        LOSE,
        condition,
      ),
    );
  }
  return out;
}
