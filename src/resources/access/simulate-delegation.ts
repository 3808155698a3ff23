import type { DelegationAllowed, DelegationEffect } from './simulate.js';
import type { PolicyFacts } from './simulation-store.js';

/** One actor's change for one subject: one delegation entry of the answer. */
export interface RawDelegation {
  kind: 'delegation';
  subject: string;
  actor: string;
  effect: DelegationEffect;
  before?: DelegationAllowed;
  after?: DelegationAllowed;
}

const allowed = (p: PolicyFacts): DelegationAllowed => ({
  capabilities: [...p.capabilities],
  maxLifetimeSeconds: p.maxLifetimeSeconds,
});

const sameAllowed = (a: PolicyFacts, b: PolicyFacts): boolean =>
  a.maxLifetimeSeconds === b.maxLifetimeSeconds &&
  a.capabilities.length === b.capabilities.length &&
  a.capabilities.every((c, i) => b.capabilities[i] === c);

/**
 * Who gains, loses or keeps with another cap the ability to act for whom: every actor of
 * every readable policy before or after, compared. Only policies the caller may read were
 * read, so nothing else can show.
 */
export function delegationEntries(
  before: ReadonlyMap<string, PolicyFacts>,
  after: ReadonlyMap<string, PolicyFacts>,
): RawDelegation[] {
  const out: RawDelegation[] = [];
  for (const subject of new Set([...before.keys(), ...after.keys()])) {
    const p0 = before.get(subject);
    const p1 = after.get(subject);
    for (const actor of new Set([...(p0?.actors ?? []), ...(p1?.actors ?? [])])) {
      const had = p0 !== undefined && p0.actors.includes(actor) ? p0 : undefined;
      const has = p1 !== undefined && p1.actors.includes(actor) ? p1 : undefined;
      if (had && has && sameAllowed(had, has)) continue;
      out.push({
        kind: 'delegation',
        subject,
        actor,
        effect: had && has ? 'CHANGE' : has ? 'GAIN' : 'LOSE',
        ...(had ? { before: allowed(had) } : {}),
        ...(has ? { after: allowed(has) } : {}),
      });
    }
  }
  return out;
}
