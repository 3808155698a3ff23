import { notFound, permissionDenied } from '../core/rpc-error.js';
import { isSelfOrBelow } from '../core/uidp.js';
import type { Visibility } from '../core/visibility.js';
import type { Capability } from './capabilities.js';
import {
  brokenCondition,
  compileCondition,
  type CompiledCondition,
  type ConditionResult,
} from './condition.js';
import type { Principal } from './principal.js';
import { restrictGrants } from './token-restriction.js';
import type { UsageRecorder } from './usage-recorder.js';

import type { Grant } from './grant.js';

export type { Grant, GrantBinding } from './grant.js';

/**
 * Whether `g` (a grant, or a binding with its window) grants at `now` (epoch ms): from
 * `startsAt` (inclusive) until `expiresAt` (exclusive).
 */
export function isLive(
  g: { readonly expiresAt?: number; readonly startsAt?: number },
  now: number,
): boolean {
  return (
    (g.startsAt === undefined || g.startsAt <= now) &&
    (g.expiresAt === undefined || now < g.expiresAt)
  );
}

/**
 * Whether `g` grants `cap` at `uid` at `now`: the one rule every decision applies (a grant
 * holds at its scope and everywhere below it, until it expires). Exported so that what
 * simulates access (`access:simulate`) decides by this very rule, not a copy of it.
 */
export function grantsAt(g: Grant, cap: Capability, uid: string, now: number): boolean {
  return g.condition === undefined && covers(g, cap, uid, now);
}

/** `grantsAt` but for its condition: the capability, the subtree and the window. */
function covers(g: Grant, cap: Capability, uid: string, now: number): boolean {
  return g.capabilities.has(cap) && isSelfOrBelow(g.scope, uid) && isLive(g, now);
}

/**
 * What a decision knows of its request beyond the principal, the capability and the uid:
 * given, a conditional grant is decided by evaluating its condition; absent, no
 * conditional grant grants (fail closed). `resource` absent: type and name are "".
 */
export interface RequestContext {
  resource?: { type: string; name: string };
  /** The upstream claims of the token acted through (bounded); absent: none. */
  claims?: ReadonlyMap<string, unknown>;
}

/** Where a resource's group is found, for a condition that reads `resource.group`. */
export interface ConditionDeps {
  /**
   * The group `uid` is (or hangs under, nearest) and its path of names from its
   * organization; undefined when there is none (then the condition errs, and denies).
   */
  groupOf(uid: string): Promise<{ uid: string; path: string } | undefined>;
  /** Where an evaluation error is logged (with the binding's uid and the position). */
  log(fields: { bindingUid: string; expression: string; error: string }): void;
}

const NO_CLAIMS: ReadonlyMap<string, unknown> = new Map();

/** One decision's group lookup, made at most once and shared by its conditional grants. */
interface GroupOnce {
  lookup?: Promise<{ uid: string; path: string } | undefined>;
}

/** Where the authorizer learns what an identity holds (its role bindings). */
export interface GrantSource {
  grantsOf(identityUid: string): Promise<Grant[]>;
  /** Forget anything remembered: bindings or roles changed. */
  invalidate?(): void;
}

/**
 * The one access decision point, used by every service for REST and reconciler calls
 * alike. A binding of a role at G grants its capabilities on G and everything below G.
 */
export class Authorizer {
  readonly #grants = new WeakMap<Principal, Promise<Grant[]>>();

  /**
   * `usage`: where a decision's granting bindings are recorded as used (last used): every
   * decision of this authorizer is taken to authorize its principal's own request (see
   * `questions` for the others); absent: nothing is recorded, and `can` stops at the first
   * grant that holds.
   */
  constructor(
    private readonly source: GrantSource,
    private readonly now: () => number = Date.now,
    private readonly usage?: UsageRecorder,
    private readonly conditions?: ConditionDeps,
  ) {
    this.questions =
      usage === undefined ? this : new Authorizer(source, now, undefined, conditions);
  }

  /**
   * The same decisions, recording no use: for a question about a principal other than the
   * one whose request is being decided (may an earlier approver still approve?). A use is
   * an authorization of the holder's own request; asking about it uses nothing, and would
   * otherwise let anyone who may ask keep a dormant binding off the unused-access findings.
   */
  readonly questions: Authorizer;

  /** Record `g`'s bindings holding `cap` as used at `now`: a map write, nothing awaited. */
  private used(g: Grant, cap: Capability, now: number): void {
    if (g.bindings === undefined || this.usage === undefined) return;
    for (const b of g.bindings) if (b.capabilities.has(cap)) this.usage.bindingUsed(b.uid, now);
  }

  /**
   * Grants are read once per principal object, i.e. once per request. A down-scoped
   * token's principal gets its identity's grants narrowed by the token (restrictGrants):
   * here, so that every decision of every door (can, heldUntil, visibility) applies it.
   */
  private grants(p: Principal): Promise<Grant[]> | undefined {
    if (p.kind !== 'identity') return undefined;
    let g = this.#grants.get(p);
    if (!g) {
      const r = p.restriction;
      g = this.source.grantsOf(p.uid);
      if (r !== undefined) g = g.then((all) => restrictGrants(all, r));
      this.#grants.set(p, g);
    }
    return g;
  }

  /** Call after a committed write that changes who holds what (bindings, roles). */
  grantsChanged(): void {
    this.source.invalidate?.();
  }

  /** Await a write that changes grants, then forget remembered grants. */
  async changingGrants<T>(write: Promise<T>): Promise<T> {
    const result = await write;
    this.grantsChanged();
    return result;
  }

  isSuperuser(p: Principal): boolean {
    return p.kind === 'admin' || p.kind === 'system';
  }

  /**
   * Whether `p` holds `cap` at `uid` (a group, or anything hanging under one). A conditional
   * grant counts only given `ctx` (the request) and where its condition evaluates to true;
   * an evaluation error denies and is logged.
   */
  async can(p: Principal, cap: Capability, uid: string, ctx?: RequestContext): Promise<boolean> {
    if (this.isSuperuser(p)) return true;
    const grants = (await this.grants(p)) ?? [];
    const now = this.now();
    let allowed = false;
    const group: GroupOnce = {};
    // Every grant that holds is recorded as used, not only the first: a binding that
    // grants a decision another also grants is in use, not a finding.
    for (const g of grants) {
      if (g.condition === undefined) {
        if (!covers(g, cap, uid, now)) continue;
      } else if (!(await this.conditionGrants(g, g.condition, cap, uid, now, ctx, group))) continue;
      if (this.usage === undefined) return true;
      allowed = true;
      this.used(g, cap, now);
    }
    return allowed;
  }

  /**
   * A binding's condition evaluated as a decision on `cap` at `uid` now would evaluate it
   * (the access check API's proof): its result and the values it read. Uses nothing; an
   * error is a false result with the error, and is logged like a decision's. `ctx`: the
   * request the check asks about (absent: `resource` "" and no claims).
   */
  async explain(
    bindingUid: string,
    expression: string,
    cap: Capability,
    uid: string,
    ctx: RequestContext = {},
  ): Promise<ConditionResult> {
    let compiled: CompiledCondition;
    try {
      compiled = compileCondition(expression);
    } catch (err) {
      compiled = brokenCondition(expression, err instanceof Error ? err.message : String(err));
    }
    const group =
      this.conditions === undefined || !compiled.readsGroup
        ? this.conditions && { uid, path: '' }
        : await this.conditions.groupOf(uid);
    if (group === undefined) return { result: false, values: {}, error: 'no group at position 0' };
    const r = compiled.evaluate({
      time: this.now(),
      capability: cap,
      group,
      resource: ctx.resource ?? { type: '', name: '' },
      claims: ctx.claims ?? NO_CLAIMS,
    });
    if (r.error !== undefined) this.conditions?.log({ bindingUid, expression, error: r.error });
    return r;
  }

  /**
   * Whether conditional grant `g` grants `cap` at `uid` now: only given `ctx` (the
   * request), within its capability, subtree and window, and where `c` evaluates to true.
   * The group is looked up only for an expression that may read it, once per decision
   * (`group` carries it from one grant to the next).
   */
  private async conditionGrants(
    g: Grant,
    c: NonNullable<Grant['condition']>,
    cap: Capability,
    uid: string,
    now: number,
    ctx: RequestContext | undefined,
    group: GroupOnce,
  ): Promise<boolean> {
    if (ctx === undefined || this.conditions === undefined || !covers(g, cap, uid, now))
      return false;
    const at = c.compiled.readsGroup
      ? await (group.lookup ??= this.conditions.groupOf(uid))
      : { uid, path: '' };
    return this.holds(c, cap, now, at, ctx);
  }

  private holds(
    c: NonNullable<Grant['condition']>,
    cap: Capability,
    now: number,
    group: { uid: string; path: string } | undefined,
    ctx: RequestContext,
  ): boolean {
    if (group === undefined) {
      this.conditions?.log({
        bindingUid: c.bindingUid,
        expression: c.compiled.expression,
        error: 'no group for the resource at position 0',
      });
      return false;
    }
    const r = c.compiled.evaluate(
      {
        time: now,
        capability: cap,
        group,
        resource: ctx.resource ?? { type: '', name: '' },
        claims: ctx.claims ?? NO_CLAIMS,
      },
      { values: false },
    );
    if (r.error !== undefined)
      this.conditions?.log({
        bindingUid: c.bindingUid,
        expression: c.compiled.expression,
        error: r.error,
      });
    return r.result;
  }

  /**
   * Until when `p` holds `cap` at `uid`, for a decision that is signed and carried away (a
   * registry token): epoch ms at which the last live grant holding it expires, Infinity
   * when one never does, undefined when `p` does not hold it now. Several grants holding
   * the same capability keep it until the latest of them expires. A conditional grant
   * counts only given `ctx` and where its condition holds now, as in `can`.
   */
  async heldUntil(
    p: Principal,
    cap: Capability,
    uid: string,
    ctx?: RequestContext,
  ): Promise<number | undefined> {
    if (this.isSuperuser(p)) return Infinity;
    const grants = (await this.grants(p)) ?? [];
    const now = this.now();
    let until: number | undefined;
    const group: GroupOnce = {};
    for (const g of grants) {
      if (g.condition === undefined) {
        if (!covers(g, cap, uid, now)) continue;
      } else if (!(await this.conditionGrants(g, g.condition, cap, uid, now, ctx, group))) continue;
      until = Math.max(until ?? 0, g.expiresAt ?? Infinity);
      this.used(g, cap, now);
    }
    return until;
  }

  /** The subtrees in which `p` holds `cap`: the filter every List applies. */
  async visibility(p: Principal, cap: Capability): Promise<Visibility> {
    if (this.isSuperuser(p)) return { kind: 'all' };
    const grants = (await this.grants(p)) ?? [];
    const now = this.now();
    // A conditional grant is decided per request: a list has none, so it shows nothing by one.
    const holding = grants.filter(
      (g) => g.condition === undefined && g.capabilities.has(cap) && isLive(g, now),
    );
    for (const g of holding) this.used(g, cap, now);
    const scopes = holding.map((g) => g.scope);
    // Drop scopes already covered by a wider one: fewer OR branches in every list query.
    const minimal = scopes.filter((s) => !scopes.some((o) => o !== s && isSelfOrBelow(o, s)));
    return { kind: 'scopes', scopes: [...new Set(minimal)] };
  }

  /**
   * Require `cap` at `uid`. A caller that cannot even see the resource (no `seeCap`)
   * is told it does not exist, so denials never reveal existence.
   *
   * @throws RpcError NOT_FOUND when `seeCap` is missing, PERMISSION_DENIED when only `cap` is.
   */
  async require(
    p: Principal,
    cap: Capability,
    uid: string,
    seeCap: Capability,
    resourceType: string,
    name = uid,
  ): Promise<void> {
    const ctx = requestContextOf(p, resourceType);
    if (await this.can(p, cap, uid, ctx)) return;
    if (cap !== seeCap && (await this.can(p, seeCap, uid, ctx))) {
      throw permissionDenied(`missing capability ${cap}`);
    }
    throw notFound(resourceType, name);
  }
}

/**
 * The request context of a resource read or write (`require`) on the doors that evaluate
 * conditions: REST and gRPC. Any other door's decisions are made without one, so a
 * conditional grant grants nothing there (fail closed) until that door is wired.
 */
function requestContextOf(p: Principal, resourceType: string): RequestContext | undefined {
  const door = p.via?.door;
  if (door !== 'rest' && door !== 'grpc') return undefined;
  const claims = p.kind === 'identity' ? p.claims : undefined;
  return {
    resource: { type: resourceType, name: '' },
    ...(claims === undefined ? {} : { claims }),
  };
}
