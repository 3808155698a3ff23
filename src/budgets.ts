import { decodeJwt } from 'jose';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Principal } from './auth/principal.js';
import { BUDGET_CLASSES, type BudgetClass, type BudgetConfig } from './budget-config.js';
import { budgetExhausted } from './core/rpc-error.js';
import { isValidUidp } from './core/uidp.js';
import type { BudgetLimiterFactory } from './db/budget-store.js';
import type { ApiMetrics } from './metrics/api-metrics.js';
import type { AllServices, ServiceLayer } from './service-layer.js';

/**
 * The one table of which calls spend which budget (docs/operations.md, "Budgets"): a
 * service method taking the caller first, by name. The budget is applied to the service
 * object every door is handed, so that REST (Koa and the fast reads), gRPC (Connect and
 * its unary fast path) and the CLI's plan, which calls the REST simulation, spend the same
 * budget and answer the same refusal through their own error paths; no door knows of it.
 */
const OPERATIONS = [
  ['accessSimulator', 'simulate', 'simulate'],
  ['access', 'whoCan', 'access_query'],
  ['access', 'whatCan', 'access_query'],
  ['access', 'batchCheck', 'access_query'],
  ['accessRequests', 'create', 'access_request'],
  ['audit', 'list', 'audit_read'],
] as const satisfies ReadonlyArray<readonly [keyof AllServices, string, BudgetClass]>;

type Scope = 'identity' | 'organization';

/** Who pays: a caller's own uid and its organization (the root group of that uid). */
interface Payer {
  identity: string;
  organization: string;
}

/** What a limiter is to this file: rate-limiter-flexible's, over the shared table. */
interface Limiter {
  readonly points: number;
  consume(key: string, points?: number): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
  reward(key: string, points?: number): Promise<RateLimiterRes>;
}

/** Callers remembered as past their own budget at once (a bound: cleared when reached). */
const MAX_REMEMBERED = 10_000;

export interface BudgetDeps {
  config: Readonly<BudgetConfig>;
  limiters: BudgetLimiterFactory;
  metrics: ApiMetrics;
  /** Where a budget store's failure is reported; the call then goes ahead (fails open). */
  warn: (obj: object, msg: string) => void;
}

/** The payer of a principal's calls: identities pay; the admin and Arbor itself do not. */
/** Whom a token request names: its `identity`, else its API token's (unverified) `sub`. */
function subjectOf(form: URLSearchParams): string | undefined {
  const identity = form.get('identity');
  if (identity) return identity;
  try {
    const sub = decodeJwt(form.get('subject_token') ?? '').sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

function payerOf(p: Principal | undefined): Payer | undefined {
  if (p?.kind !== 'identity') return undefined;
  return { identity: p.uid, organization: p.uid.split('/', 1)[0]! };
}

/**
 * The budgets of every class, each a pair of limiters (one caller, one organization) over
 * the database, so that every worker and replica spends from the same count.
 */
export class Budgets {
  readonly #limits = new Map<BudgetClass, Record<Scope, Limiter>>();
  readonly #refusedUntil = new Map<string, number>();

  constructor(private readonly d: BudgetDeps) {
    for (const c of BUDGET_CLASSES) {
      const { identity, organization } = d.config.classes[c];
      const make = (scope: Scope, w: { points: number; seconds: number }) =>
        d.limiters({ keyPrefix: `${c}:${scope}`, points: w.points, duration: w.seconds });
      this.#limits.set(c, {
        identity: make('identity', identity),
        organization: make('organization', organization),
      });
    }
  }

  /**
   * Spends one point of the payer's budget and one of its organization's, both at once (one
   * round trip's wait, not two). A caller past its own budget spends nothing of its
   * organization's (the point is given back, and until its window ends the caller is
   * refused from memory before either is asked), so one caller in a loop does not starve
   * the rest of its organization.
   * @throws RpcError RESOURCE_EXHAUSTED (QuotaFailure, RetryInfo) past either budget.
   */
  async spend(c: BudgetClass, payer: Payer): Promise<void> {
    const limits = this.#limits.get(c)!;
    const mine = `${c}:${payer.identity}`;
    const until = this.#refusedUntil.get(mine);
    if (until !== undefined) {
      const left = until - Date.now();
      if (left > 0)
        this.#refusal(c, 'identity', payer, limits.identity, new RateLimiterRes(0, left));
      this.#refusedUntil.delete(mine);
    }
    const [own, org] = await Promise.allSettled([
      limits.identity.consume(payer.identity),
      limits.organization.consume(payer.organization),
    ]);
    if (own.status === 'rejected') {
      if (org.status === 'fulfilled')
        await limits.organization.reward(payer.organization).catch((e: unknown) => {
          this.d.warn({ err: e, budget: c }, 'budget store failed to give a point back');
        });
      if (own.reason instanceof RateLimiterRes) this.#remember(mine, own.reason.msBeforeNext);
      this.#refusal(c, 'identity', payer, limits.identity, own.reason);
    }
    if (org.status === 'rejected')
      this.#refusal(c, 'organization', payer, limits.organization, org.reason);
    this.d.metrics.budgetSpent.inc({ budget: c });
  }

  /** Callers refused by their own budget, until its window ends; bounded, as anything kept per caller. */
  #remember(key: string, ms: number): void {
    if (this.#refusedUntil.size >= MAX_REMEMBERED) this.#refusedUntil.clear();
    this.#refusedUntil.set(key, Date.now() + ms);
  }

  /**
   * Refuses, spending nothing, when either budget is already spent: for calls charged only
   * once they succeed ({@link chargeOnSuccess}).
   * @throws RpcError RESOURCE_EXHAUSTED past either budget.
   */
  async require(c: BudgetClass, payer: Payer): Promise<void> {
    const limits = this.#limits.get(c)!;
    for (const scope of ['identity', 'organization'] as const) {
      let res: RateLimiterRes | null;
      try {
        res = await limits[scope].get(payer[scope]);
      } catch (e) {
        this.#refusal(c, scope, payer, limits[scope], e);
        continue;
      }
      if (res && res.consumedPoints >= limits[scope].points)
        this.#refusal(c, scope, payer, limits[scope], res);
    }
  }

  /** A refusal (throws), or a failure of the store (reported; the call goes ahead). */
  #refusal(c: BudgetClass, scope: Scope, payer: Payer, limiter: Limiter, e: unknown): void {
    if (!(e instanceof RateLimiterRes)) {
      this.d.warn({ err: e, budget: c }, 'budget store failed; the call goes ahead');
      return;
    }
    this.d.metrics.budgetRefused.inc({ budget: c, scope });
    throw budgetExhausted(
      {
        subject: `${scope}:${payer[scope]}`,
        description: `the ${c} budget of this ${scope} (${limiter.points} calls a window) is spent`,
      },
      e.msBeforeNext / 1000,
    );
  }

  /**
   * Every method of {@link OPERATIONS} spending its class's budget before it runs, replaced
   * on the very objects the doors are given (as the STS's exchange counter is), and the
   * token machinery's: see {@link budgetTokens}.
   */
  apply(layer: ServiceLayer): void {
    for (const [service, method, c] of OPERATIONS) {
      const target = layer.services[service] as unknown as Record<string, unknown>;
      const original = target[method];
      if (typeof original !== 'function') throw new Error(`no method ${service}.${method}`);
      const call = (original as (p: Principal, ...a: unknown[]) => Promise<unknown>).bind(target);
      target[method] = async (p: Principal, ...a: unknown[]) => {
        const payer = payerOf(p);
        if (payer) await this.spend(c, payer);
        return call(p, ...a);
      };
    }
    this.budgetTokens(layer);
  }

  /**
   * The two ways to a token. The registry's token server spends its caller's budget
   * (anonymous callers, whose tokens grant nothing, spend none). An STS exchange has no
   * Arbor caller yet, so it is charged to the identity it assumes and that identity's
   * organization, and only when it succeeds: a token that does not verify spends nothing,
   * so nobody can spend a workload's budget by sending bad tokens naming it. A spent
   * budget refuses before any work; concurrent exchanges may overshoot it by their number.
   */
  /**
   * The token endpoint's exchange spends `sts_exchange` like an STS exchange: charged to the
   * identity the subject names (the `identity` asked for, or an API token's unverified
   * `sub`), only when it succeeds; a spent budget refuses before any work.
   */
  private budgetOAuth(layer: ServiceLayer): void {
    const { oauth } = layer;
    const exchange = oauth.exchange.bind(oauth);
    oauth.exchange = async (form) => {
      const uid = subjectOf(form);
      if (uid === undefined || !isValidUidp(uid)) return exchange(form);
      const payer = { identity: uid, organization: uid.split('/', 1)[0]! };
      await this.require('sts_exchange', payer);
      const issued = await exchange(form);
      await this.spend('sts_exchange', payer).catch(() => undefined);
      return issued;
    };
  }

  private budgetTokens(layer: ServiceLayer): void {
    const { sts, registryAuth } = layer;
    const exchange = sts.exchange.bind(sts);
    sts.exchange = async (upstream, req) => {
      const uid = req.identity;
      // An identity that is no uid is refused by the exchange itself, and names no budget.
      if (uid === undefined || !isValidUidp(uid)) return exchange(upstream, req);
      const payer = { identity: uid, organization: uid.split('/', 1)[0]! };
      await this.require('sts_exchange', payer);
      const issued = await exchange(upstream, req);
      await this.spend('sts_exchange', payer).catch(() => undefined);
      return issued;
    };
    this.budgetOAuth(layer);
    if (!registryAuth) return;
    const { tokens } = registryAuth;
    const issue = tokens.issue.bind(tokens);
    tokens.issue = async (p, ...a) => {
      const payer = payerOf(p);
      if (payer) await this.spend('registry_token', payer);
      return issue(p, ...a);
    };
  }
}
