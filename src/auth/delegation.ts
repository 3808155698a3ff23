import type { Capability } from './capabilities.js';

/** A delegation chain is at most this many actors long (RFC 8693 §4.1's nested `act`). */
export const MAX_DELEGATION_DEPTH = 4;

/** The claim of a delegated API token naming its actors, the current actor first. */
export const ACTORS_CLAIM = 'arbor_actors';
/** The claim of a delegated API token: when its delegation began (epoch seconds). */
export const DELEGATED_AT_CLAIM = 'arbor_delegated_at';

/** What a delegation policy allows (resources/delegation holds the whole record). */
export interface DelegationAllowance {
  /** The identities (uids) that may act for the policy's identity. */
  readonly actors: readonly string[];
  /** At most these capabilities, whatever the identity holds. */
  readonly capabilities: ReadonlySet<Capability>;
  /** A delegation lasts at most this long from its start. */
  readonly maxLifetimeSeconds: number;
}

/** Where the live policies are read (the delegation policy service). */
export interface DelegationPolicies {
  allowanceOf(identityUid: string): Promise<DelegationAllowance | undefined>;
}

/** What a chain still allows now: its capabilities and until when (epoch seconds). */
export interface LiveDelegation {
  capabilities: ReadonlySet<Capability>;
  until: number;
}

/**
 * Whether the chain `actors` (current actor first) may act for `subject` now, by the policies
 * as they are now: `subject`'s policy names `actors[0]`, `actors[0]`'s names `actors[1]`, and
 * so on; the capabilities are the intersection of every link's, and the chain lasts until
 * the earliest of `since + maxLifetimeSeconds`. undefined: a link is missing (a policy
 * removed, an actor no longer named, a chain too deep) or the chain's time is over.
 */
export async function liveDelegation(
  policies: DelegationPolicies,
  subject: string,
  actors: readonly string[],
  since: number,
  nowS: number,
): Promise<LiveDelegation | undefined> {
  if (actors.length === 0 || actors.length > MAX_DELEGATION_DEPTH) return undefined;
  let holder = subject;
  let caps: ReadonlySet<Capability> | undefined;
  let until = Infinity;
  const seen = new Set([subject]);
  for (const actor of actors) {
    if (seen.has(actor)) return undefined;
    seen.add(actor);
    const p = await policies.allowanceOf(holder);
    if (p === undefined || !p.actors.includes(actor)) return undefined;
    caps = caps === undefined ? p.capabilities : intersect(caps, p.capabilities);
    until = Math.min(until, since + p.maxLifetimeSeconds);
    holder = actor;
  }
  if (caps === undefined || until <= nowS) return undefined;
  return { capabilities: caps, until };
}

/** An `act` claim: an actor, and the prior actor it acts through. */
export interface ActClaim {
  iss: string;
  sub: string;
  act?: ActClaim;
}

/** RFC 8693 §4.1's `act` of a chain: the current actor outermost, prior actors nested. */
export function actClaim(issuer: string, actors: readonly string[]): ActClaim {
  let act: ActClaim | undefined;
  for (let i = actors.length - 1; i >= 0; i--)
    act = { iss: issuer, sub: actors[i]!, ...(act === undefined ? {} : { act }) };
  if (act === undefined) throw new Error('a delegation chain has at least one actor');
  return act;
}

function intersect<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): ReadonlySet<T> {
  const out = new Set<T>();
  for (const x of a) if (b.has(x)) out.add(x);
  return out;
}
