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
  /** A conditional binding's condition: a simulation counts it as granting nothing. */
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
}

/** One identity's bindings as the authorizer's grants, indexed by the group they are at. */
class GrantIndex {
  readonly #at = new Map<string, { grant: Grant; binding: WorldBinding }[]>();

  constructor(
    bindings: readonly WorldBinding[],
    private readonly now: number,
  ) {
    for (const b of bindings) {
      // Decided per request, which a simulation has none of: fail closed, as who-can.
      if (b.condition !== undefined) continue;
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

/**
 * What changes for one identity between two sets of its bindings, at `now`. Where it holds
 * a capability is a union of subtrees; the groups that gain it are exactly the tops after
 * that were not held before (a group below one held before was held too), each with the
 * tops before beneath it as holes, and the other way round for what it loses.
 */
export function identityDelta(
  identityUid: string,
  beforeBindings: readonly WorldBinding[],
  afterBindings: readonly WorldBinding[],
  now: number,
): RawDelta[] {
  const before = new GrantIndex(beforeBindings, now);
  const after = new GrantIndex(afterBindings, now);
  const caps = [...new Set([...before.capabilities(), ...after.capabilities()])].sort();
  const out: RawDelta[] = [];
  for (const capability of caps) {
    const tops0 = before.tops(capability);
    const tops1 = after.tops(capability);
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
        });
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
        });
  }
  return out;
}
