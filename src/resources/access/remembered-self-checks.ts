import { isLive } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import { Lru } from '../../core/lru.js';
import { isSelfOrBelow } from '../../core/uidp.js';
import type { ReadCache } from '../read-cache.js';
import { isBuiltInRole } from '../reference-visibility.js';
import type { UnitOfWork } from '../tx.js';
import type { CheckResult } from './access.js';
import type { AccessStore, BindingGrant, CheckFacts } from './access-store.js';
import {
  decidedIn,
  retimer,
  settledConditions,
  Sketch,
  type Decided,
} from './remembered-conditions.js';

/** The read caches a self check consults (db/read-cache.ts), and how to fill them. */
export interface CheckCache {
  /** Every live binding of an identity, by identity uid. */
  bindings: ReadCache<BindingGrant[]>;
  /** Group rows by uid (shared with GroupService.get): here only whether one exists. */
  groups: ReadCache<unknown>;
  /** The group's row from the primary (a cache may keep it), or undefined. */
  loadGroup(uid: string): Promise<unknown>;
  /**
   * The groups' paths of names conditions read, by uid (names/condition-groups.ts): here
   * only which entry is current. Absent: a conditional answer is decided again each use.
   */
  conditionGroups?: ReadCache<unknown>;
}

/**
 * What memory knows of one self check: the answer made earlier from the facts it still
 * remembers, or those facts and a way to share the answer made of them (`keep` returns it).
 */
export type RememberedCheck =
  | { answer: CheckResult }
  | {
      facts: CheckFacts;
      keep(result: CheckResult): CheckResult;
      /** An answer kept with conditions in it, which only they may change (see Sketch). */
      sketch?: Sketch;
    };

interface Kept {
  held: readonly BindingGrant[];
  group: object;
  until: number;
  result: CheckResult;
  /** The conditional bindings that took part (empty: the answer is whole). */
  decided: readonly Decided[];
  /**
   * Present where every condition in `decided` comes out the same until `until` given the
   * same group path (`settledConditions`): the answer is served whole, while the
   * condition-groups cache entry it was decided with (when one reads the group) is current.
   */
  settled?: { groupEntry: object | undefined; at(now: number): CheckResult };
}

/**
 * Self checks ("may I do C at G?") answered from the read caches: the caller's remembered
 * bindings and the group's remembered row, and, once made, the answer itself.
 *
 * An answer about an existing group whose proofs name only built-in roles (visible to
 * everyone) is a function of those two cache entries alone, which the caches replace, as
 * new objects, on any change announced for the identity's bindings, the group, or any
 * role; and of time only through expiry and scheduled starts. It is kept until the next
 * instant at which one of the bindings expires or starts, and served only while both
 * entries are the ones it was made from and that instant has not come. Where conditional
 * bindings took part, see remembered-conditions.ts.
 */
export class RememberedSelfChecks {
  /**
   * `hits`: answered from memory; `rechecked`: a kept answer offered with its conditions to
   * decide again (`sketch`); `misses`: made anew from remembered facts; `bypassed`: the
   * facts were not remembered (or the caches could not serve), so the database was asked.
   */
  readonly stats = { hits: 0, misses: 0, bypassed: 0, rechecked: 0 };
  /** At most this many answers; each is a small object. */
  readonly #answers = new Lru<string, Kept>(10_000);

  constructor(
    private readonly c: CheckCache,
    private readonly uow: UnitOfWork,
    private readonly access: AccessStore,
  ) {}

  /**
   * The answer, or else the facts, of `identityUid`'s check at `groupUid` from memory, when
   * both its bindings and the group are remembered and may be served; else undefined, and
   * whichever was missing is loaded into its cache from the primary in the background, for
   * the next check (this one asks the database meanwhile). The identity is the caller: it
   * exists.
   */
  lookup(
    identityUid: string,
    groupUid: string,
    capability: Capability,
  ): RememberedCheck | undefined {
    const c = this.c;
    const held = c.bindings.peek(identityUid);
    const group = c.groups.peek(groupUid);
    if (held === undefined)
      c.bindings.warm(identityUid, () =>
        this.uow.read((tx) => this.access.bindingsOf(tx, identityUid)),
      );
    if (group === undefined) c.groups.warm(groupUid, () => c.loadGroup(groupUid));
    if (held === undefined || group === undefined) {
      this.stats.bypassed++;
      return undefined;
    }
    const now = Date.now();
    const key = `${identityUid}\0${capability}\0${groupUid}`;
    const kept = this.#answers.get(key);
    const current =
      kept !== undefined && kept.held === held.value && kept.group === group && now < kept.until
        ? kept
        : undefined;
    if (current !== undefined && this.whole(current, groupUid)) {
      this.stats.hits++;
      return { answer: current.settled?.at(now) ?? current.result };
    }
    if (current !== undefined) this.stats.rechecked++;
    else this.stats.misses++;
    const facts: CheckFacts = {
      groupExists: group.value !== undefined,
      identityExists: true,
      // Unexpired, as the store reads them: the answer tells the scheduled ones apart.
      bindings: held.value.filter(
        (b) => isLive({ expiresAt: b.expiresAt }, now) && isSelfOrBelow(b.groupUid, groupUid),
      ),
    };
    // An answer carries paths of names, which a rename of the identity or of a group above
    // the checked one changes without replacing either cache entry: kept at most
    // NAMES_KEPT_MS, so such a rename shows within that time.
    const until = Math.min(nextChange(held.value, now), now + NAMES_KEPT_MS);
    // The path conditions will read, as the cache holds it before they read it: an entry
    // still current once the answer is made is the one they read (or a later one).
    const conditionGroup = facts.bindings.some((b) => b.condition !== undefined)
      ? c.conditionGroups?.peek(groupUid)
      : undefined;
    return {
      facts,
      ...(current !== undefined ? { sketch: new Sketch(current.result, current.decided) } : {}),
      keep: (result) => {
        // Kept only when the answer follows from the facts alone: not of a group that is
        // gone (who may list it decides), nor naming a custom role in its grants or pending
        // bindings (whether the caller may list it decides, and the grants that say so may
        // come from another cache). Conditions are the exception `decided` carries
        // (remembered-conditions.ts).
        const named = [...result.grants, ...(result.pending ?? [])];
        if (!facts.groupExists || !named.every((g) => isBuiltInRole(g.role.uid))) return result;
        const decided = decidedIn(result, facts.bindings, capability, now);
        const s = decided.length > 0 ? settledConditions(decided, now) : undefined;
        const groupHeld =
          conditionGroup !== undefined && c.conditionGroups?.peek(groupUid) === conditionGroup;
        const settled = s !== undefined && (!s.readsGroup || groupHeld) ? s : undefined;
        this.#answers.set(key, {
          held: held.value,
          group,
          // Kept again from a sketch, the answer keeps its first names: never past the
          // first keeping's bound, so a rename still shows within NAMES_KEPT_MS.
          until: Math.min(until, settled?.until ?? until, current?.until ?? until),
          result: Object.freeze(result),
          decided,
          ...(settled !== undefined
            ? {
                settled: {
                  groupEntry: settled.readsGroup ? conditionGroup : undefined,
                  // The proofs that show a time are found once: none, and it is `result`.
                  at: retimer(result),
                },
              }
            : {}),
        });
        return result;
      },
    };
  }

  /**
   * Whether `kept` (current) is served as it is: no condition took part, or every one holds
   * until its `until` and reads the same path of names as then (its cache entry current).
   */
  private whole(kept: Kept, groupUid: string): boolean {
    if (kept.decided.length === 0) return true;
    if (kept.settled === undefined) return false;
    const entry = kept.settled.groupEntry;
    return entry === undefined || this.c.conditionGroups?.peek(groupUid) === entry;
  }
}

/** How long a remembered answer's paths of names may lag a rename (docs/api.md, Paths). */
const NAMES_KEPT_MS = 30_000;

/** The first instant after `now` at which one of `bindings` expires or starts (never: +∞). */
function nextChange(bindings: readonly BindingGrant[], now: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const b of bindings)
    for (const at of [b.expiresAt, b.startsAt])
      if (at !== undefined && at > now && at < next) next = at;
  return next;
}
