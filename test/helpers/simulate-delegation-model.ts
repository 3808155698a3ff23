import type { Capability } from '../../src/auth/capabilities.js';
import { can, type Caller, type ModelWorld } from './access-model.js';

/**
 * Delegation entries of access:simulate, written to be obviously right: the policies before
 * and after are plain maps, compared actor by actor. Property tests compare it with the
 * simulator.
 *
 * 1. A policy is readable by the caller when it may list and update its identity (the admin:
 *    every one), judged on the caller's grants before the set; only readable policies show.
 * 2. setDelegationPolicy applies to an identity there (at that point of the set) that the
 *    caller may list and whose policy it may read; clearing (`actors: []`) applies only where
 *    a policy is there. It stores what the real set stores: actors and capabilities sorted,
 *    once each, the lifetime 3600 s when absent. deleteIdentity and deleteGroup (of one the
 *    caller may list) take the policies of what they delete.
 * 3. For each readable identity and each actor named before or after: GAIN (named after
 *    only), LOSE (before only), CHANGE (both, with other capabilities or lifetime).
 */
export interface ModelPolicy {
  actors: string[];
  capabilities: Capability[];
  maxLifetimeSeconds: number;
}

export type DelegationChange =
  | {
      setDelegationPolicy: {
        identityUid: string;
        actors: string[];
        capabilities?: Capability[];
        maxLifetimeSeconds?: number;
      };
    }
  | { deleteIdentity: { uid: string } }
  | { deleteGroup: { uid: string } };

export interface ModelDelegationDelta {
  subject: string;
  actor: string;
  effect: 'GAIN' | 'LOSE' | 'CHANGE';
  before?: { capabilities: Capability[]; maxLifetimeSeconds: number };
  after?: { capabilities: Capability[]; maxLifetimeSeconds: number };
}

const covers = (scope: string, uid: string) => uid === scope || uid.startsWith(`${scope}/`);

export function simulateDelegation(
  w: ModelWorld,
  policies: ReadonlyMap<string, ModelPolicy>,
  c: Caller,
  changes: readonly DelegationChange[],
): { applied: boolean[]; deltas: ModelDelegationDelta[] } {
  const callerCan = (cap: Capability, uid: string) => c === 'admin' || can(w, c, cap, uid);
  const readable = (id: string) =>
    callerCan('identity.list', id) && callerCan('identity.update', id);
  let groups = [...w.groups];
  let identities = [...w.identities];
  const after = new Map(policies);
  const applied = changes.map((ch) => {
    if ('setDelegationPolicy' in ch) {
      const p = ch.setDelegationPolicy;
      const ok =
        identities.includes(p.identityUid) &&
        readable(p.identityUid) &&
        (p.actors.length > 0 || after.has(p.identityUid));
      if (!ok) return false;
      if (p.actors.length === 0) after.delete(p.identityUid);
      else
        after.set(p.identityUid, {
          actors: [...new Set(p.actors)].sort(),
          capabilities: [...new Set(p.capabilities ?? [])].sort(),
          maxLifetimeSeconds: p.maxLifetimeSeconds ?? 3600,
        });
      return true;
    }
    if ('deleteIdentity' in ch) {
      const uid = ch.deleteIdentity.uid;
      if (!identities.includes(uid) || !callerCan('identity.list', uid)) return false;
      identities = identities.filter((x) => x !== uid);
      after.delete(uid);
      return true;
    }
    const uid = ch.deleteGroup.uid;
    if (!groups.includes(uid) || !callerCan('groups.list', uid)) return false;
    groups = groups.filter((g) => !covers(uid, g));
    identities = identities.filter((x) => !covers(uid, x));
    for (const id of [...after.keys()]) if (covers(uid, id)) after.delete(id);
    return true;
  });
  const deltas: ModelDelegationDelta[] = [];
  const subjects = [...new Set([...policies.keys(), ...after.keys()])].filter(readable).sort();
  for (const subject of subjects) {
    const p0 = policies.get(subject);
    const p1 = after.get(subject);
    const actors = [...new Set([...(p0?.actors ?? []), ...(p1?.actors ?? [])])].sort();
    for (const actor of actors) {
      const had = p0?.actors.includes(actor) ? p0 : undefined;
      const has = p1?.actors.includes(actor) ? p1 : undefined;
      const of = (p: ModelPolicy) => ({
        capabilities: p.capabilities,
        maxLifetimeSeconds: p.maxLifetimeSeconds,
      });
      if (had && has && JSON.stringify(of(had)) === JSON.stringify(of(has))) continue;
      deltas.push({
        subject,
        actor,
        effect: had && has ? 'CHANGE' : has ? 'GAIN' : 'LOSE',
        ...(had ? { before: of(had) } : {}),
        ...(has ? { after: of(has) } : {}),
      });
    }
  }
  return { applied, deltas };
}
