import type {
  AccessDelta,
  SimulateAnswer,
  SimulatedGrant,
} from '../../src/resources/access/simulate.js';

/** One capability's delta, as the answer was before it was grouped (what the models give). */
export interface FlatDelta {
  identity: AccessDelta['identity'];
  capability: string;
  group: AccessDelta['group'];
  effect: AccessDelta['effect'];
  before: Omit<SimulatedGrant, 'capabilities'>[];
  after: Omit<SimulatedGrant, 'capabilities'>[];
  unchangedBelow: string[];
  /** A conditional entry's expression; absent: unconditional. */
  condition?: string;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The grouped entries of `pages` (asked with `explain`) back to one delta per capability,
 * by identity, capability and group: each capability's proofs are the grants citing it,
 * its holes the groups listing it. A grant or hole citing a capability the entry does not
 * list would be lost here, so it is thrown on.
 */
export function flatDeltas(pages: readonly SimulateAnswer[]): FlatDelta[] {
  const out: FlatDelta[] = [];
  for (const d of pages.flatMap((p) => p.deltas)) {
    const cited = [...d.before, ...d.after, ...d.unchangedBelow].flatMap((x) => x.capabilities);
    for (const c of cited)
      if (!d.capabilities.includes(c)) throw new Error(`a proof cites ${c}, not in the entry`);
    const strip = ({ capabilities: _, ...g }: SimulatedGrant) => g;
    for (const capability of d.capabilities)
      out.push({
        identity: d.identity,
        capability,
        group: d.group,
        effect: d.effect,
        before: d.before.filter((g) => g.capabilities.includes(capability)).map(strip),
        after: d.after.filter((g) => g.capabilities.includes(capability)).map(strip),
        unchangedBelow: d.unchangedBelow
          .filter((u) => u.capabilities.includes(capability))
          .map((u) => u.groupUid),
        ...(d.condition === undefined ? {} : { condition: d.condition.expression }),
      });
  }
  return out.sort(
    (a, b) =>
      byText(a.identity.uid, b.identity.uid) ||
      byText(a.capability, b.capability) ||
      byText(a.group.uid, b.group.uid) ||
      byText(a.condition ?? '', b.condition ?? ''),
  );
}

/** How many entries `deltas` group into: one per identity, group, effect and condition. */
export function entryCount(
  deltas: readonly { identity: string; group: string; effect: string; condition?: string }[],
): string {
  return String(
    new Set(deltas.map((d) => JSON.stringify([d.identity, d.group, d.effect, d.condition ?? null])))
      .size,
  );
}
