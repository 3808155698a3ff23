import { isLive } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import { compileCondition } from '../../auth/condition.js';
import type { CheckResult, ExplainedCondition, GrantProof } from './access.js';
import type { BindingGrant } from './access-store.js';

/**
 * How a remembered self check (remembered-self-checks.ts) keeps an answer in which
 * conditional bindings took part. Everything in such an answer but the conditions'
 * evaluations follows from the remembered facts, as a plain answer's does. A condition
 * reads the time and the group's path of names besides (a self check names no resource
 * and no claims): where it reads the time only against literal instants, its result holds
 * until the next of them and while the group's path is the one it read (`settled`); else
 * it is decided again on every use (Sketch).
 */

/** A conditional binding an answer decided, and whether its condition held then. */
export interface Decided {
  binding: BindingGrant;
  held: boolean;
}

/**
 * The conditional bindings `result` decided, as AccessService.answer picks them (live, and
 * holding the capability), each with whether its condition held: a granting one is among
 * the grants; one that did not hold is among `conditional`, or left out where another
 * binding granted.
 */
export function decidedIn(
  result: CheckResult,
  bindings: readonly BindingGrant[],
  capability: Capability,
  now: number,
): Decided[] {
  const granted = new Set(result.grants.map((g) => g.bindingUid));
  return bindings
    .filter((b) => b.condition !== undefined && isLive(b, now))
    .filter((b) => b.capabilities.includes(capability))
    .map((binding) => ({ binding, held: granted.has(binding.uid) }));
}

/**
 * Whether the decided conditions all hold still from `now` on, and until when: each reads
 * the time only against literal instants (`stableUntil`); whether any reads the group (its
 * path must be the one read then). Undefined where one must be evaluated on every use.
 */
export function settledConditions(
  decided: readonly Decided[],
  now: number,
): { until: number; readsGroup: boolean } | undefined {
  let until = Number.POSITIVE_INFINITY;
  let readsGroup = false;
  for (const { binding } of decided) {
    let compiled;
    try {
      compiled = compileCondition(binding.condition!.expression);
    } catch {
      return undefined;
    }
    if (compiled.stableUntil === undefined) return undefined;
    until = Math.min(until, compiled.stableUntil(now));
    readsGroup ||= compiled.readsGroup;
  }
  return { until, readsGroup };
}

/**
 * How to make `result` as decided at another instant: each condition's `request.time` is
 * the time of that use (the result is the same at every instant the answer is kept for,
 * the value read is not). Worked out once, at keeping: a use only replaces the proofs that
 * show the time.
 */
export function retimer(result: CheckResult): (now: number) => CheckResult {
  const timed = (proofs: readonly GrantProof[] | undefined): number[] =>
    (proofs ?? []).flatMap((g, i) =>
      g.condition?.values['request.time'] !== undefined ? [i] : [],
    );
  const inGrants = timed(result.grants);
  const inConditional = timed(result.conditional);
  if (inGrants.length === 0 && inConditional.length === 0) return () => result;
  // The last answer made, and when: uses within one millisecond share it (frozen).
  let lastMs = Number.NaN;
  let last = result;
  return (now) => {
    if (now === lastMs) return last;
    const at = new Date(now).toISOString();
    const out = { ...result, grants: withTime(result.grants, inGrants, at) };
    if (result.conditional !== undefined)
      out.conditional = withTime(result.conditional, inConditional, at);
    lastMs = now;
    last = Object.freeze(out);
    return last;
  };
}

function withTime(proofs: readonly GrantProof[], at: readonly number[], iso: string): GrantProof[] {
  const out = proofs.slice();
  for (const i of at) {
    const g = proofs[i]!;
    const c = g.condition!;
    out[i] = { ...g, condition: { ...c, values: { ...c.values, 'request.time': iso } } };
  }
  return out;
}

/**
 * A kept answer whose conditions are decided again on each use (they read the time other
 * than against literals, or the group's path could not be tied to a cache entry).
 */
export class Sketch {
  constructor(
    private readonly kept: CheckResult,
    private readonly decided: readonly Decided[],
  ) {}

  /**
   * The kept answer with each condition's fresh evaluation in its proof, when every
   * condition comes out as it did then; else undefined (the answer is made anew, and the
   * decision is never one a stale evaluation made).
   */
  async again(
    explain: (b: BindingGrant) => Promise<ExplainedCondition>,
  ): Promise<CheckResult | undefined> {
    const fresh = new Map<string, ExplainedCondition>();
    for (const d of this.decided) {
      const e = await explain(d.binding);
      if (e.result !== d.held) return undefined;
      fresh.set(d.binding.uid, e);
    }
    const redo = (g: GrantProof): GrantProof => {
      const e = fresh.get(g.bindingUid);
      return e === undefined ? g : { ...g, condition: e };
    };
    const { grants, conditional } = this.kept;
    return {
      ...this.kept,
      grants: grants.map(redo),
      ...(conditional !== undefined ? { conditional: conditional.map(redo) } : {}),
    };
  }
}
