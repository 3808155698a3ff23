import type { Expr } from './condition-environment.js';
import type { ConditionInput } from './condition-types.js';

/**
 * What one condition's result depends on, so that a result once made can answer the next
 * decision with the same inputs without running the expression again.
 *
 * Every input but the time is a value a key can hold. The time changes on every decision,
 * but an expression that reads it only by comparing it with timestamp literals
 * (`request.time < timestamp("2027-01-01T00:00:00Z")`: the literal folded to a constant,
 * condition-fold.ts) has the same result everywhere between two of those instants: the key
 * holds on which side of each instant the time lies. An expression that reads it any other
 * way (`request.time.getHours()`, arithmetic) is run on every decision.
 */
export interface ResultKey {
  /** The key of `input`'s result. */
  of(input: ConditionInput): string;
  /**
   * The first instant after `now` (epoch ms) at which the time alone may change the result:
   * the next literal instant it is compared with; +∞ where it reads no time.
   */
  until(now: number): number;
}

/** How many results one condition keeps (distinct inputs; the least used go first). */
export const MEMO_ENTRIES = 1_000;

/**
 * A result memo for a compiled condition: at most MEMO_ENTRIES keys, forgotten all at once
 * when full (a hit is one map read; a stream of distinct inputs costs evaluations, never
 * memory).
 */
export class ResultMemo<R> {
  readonly #map = new Map<string, R>();

  get(key: string): R | undefined {
    return this.#map.get(key);
  }

  set(key: string, value: R): void {
    if (this.#map.size >= MEMO_ENTRIES) this.#map.clear();
    this.#map.set(key, value);
  }
}

const COMPARISONS = new Set(['_<_', '_<=_', '_>_', '_>=_', '_==_', '_!=_']);

/**
 * The key of a checked expression's results, or undefined where the time is read other than
 * against literals. `constants`: the folded literals, by the names the tree now uses.
 */
export function resultKey(root: Expr, constants: Record<string, unknown>): ResultKey | undefined {
  const cuts: Cut[] = [];
  let claims = false;
  let opaque = false;
  const isTime = (e: Expr | undefined): boolean =>
    e?.exprKind.case === 'selectExpr' &&
    !e.exprKind.value.testOnly &&
    e.exprKind.value.field === 'time' &&
    e.exprKind.value.operand?.exprKind.case === 'identExpr' &&
    e.exprKind.value.operand.exprKind.value.name === 'request';
  const instant = (e: Expr | undefined): Cut | undefined => {
    if (e?.exprKind.case !== 'identExpr') return undefined;
    // A folded timestamp is CEL's reflection of a google.protobuf.Timestamp message.
    const v = constants[e.exprKind.value.name] as { message?: Timestamp } | undefined;
    const t = v?.message;
    if (t?.$typeName !== 'google.protobuf.Timestamp') return undefined;
    return cutAt(t.seconds ?? 0n, t.nanos ?? 0);
  };
  const visit = (e: Expr | undefined): void => {
    if (e === undefined || opaque) return;
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        return;
      case 'identExpr':
        // `request` whole reads the time opaquely; `token` whole reads the claims.
        if (k.value.name === 'request') opaque = true;
        if (k.value.name === 'token') claims = true;
        return;
      case 'selectExpr':
        if (isTime(e)) opaque = true;
        else if (
          k.value.operand?.exprKind.case === 'identExpr' &&
          k.value.operand.exprKind.value.name === 'request'
        )
          return; // request.capability: in every key
        else visit(k.value.operand);
        return;
      case 'listExpr':
        k.value.elements.forEach(visit);
        return;
      case 'callExpr': {
        const [x, y] = k.value.args;
        if (COMPARISONS.has(k.value.function) && k.value.args.length === 2) {
          const at = isTime(x) ? instant(y) : isTime(y) ? instant(x) : undefined;
          if (at !== undefined) {
            cuts.push(at);
            return;
          }
        }
        visit(k.value.target);
        k.value.args.forEach(visit);
        return;
      }
      default:
        // Anything else (the checker refuses it today) is run on every decision.
        opaque = true;
    }
  };
  visit(root);
  if (opaque) return undefined;
  return {
    of: (input) => {
      const parts = [
        sides(cuts, input.time),
        input.capability,
        input.group.uid,
        input.group.path,
        input.resource.type,
        input.resource.name,
        claims ? claimsKey(input.claims) : '',
      ];
      // A resource named in a check's question is anyone's text: where a part holds the
      // separator, which would let one input's key stand for another's, the key is JSON
      // (which starts with `[`, as no joined key does: `sides` writes only <, = and >).
      return parts.some((p) => p.includes('\0')) ? JSON.stringify(parts) : parts.join('\0');
    },
    until: (now) => {
      let next = Number.POSITIVE_INFINITY;
      for (const c of cuts) {
        // The side changes where `sides` answers differently: at the cut's ms when it is
        // met exactly, one ms later (past it) otherwise.
        const at = now < c.ms && !c.past ? c.ms : now <= c.ms ? c.ms + 1 : undefined;
        if (at !== undefined && at < next) next = at;
      }
      return next;
    },
  };
}

interface Timestamp {
  $typeName?: string;
  seconds?: bigint;
  nanos?: number;
}

/** A timestamp literal as a whole millisecond and whether it lies past it (sub-ms nanos). */
interface Cut {
  ms: number;
  past: boolean;
}

function cutAt(seconds: bigint, nanos: number): Cut {
  return { ms: Number(seconds) * 1000 + Math.floor(nanos / 1e6), past: nanos % 1e6 !== 0 };
}

/**
 * On which side of each cut `time` (whole ms, as decisions read it) lies: before, at or
 * after. A cut with sub-millisecond nanos is never met exactly: a time at its whole ms lies
 * before it.
 */
function sides(cuts: readonly Cut[], time: number): string {
  let s = '';
  for (const c of cuts)
    s += time < c.ms || (time === c.ms && c.past) ? '<' : time === c.ms ? '=' : '>';
  return s;
}

/** One key per claims map (a token's claims are one object for as long as it is cached). */
const CLAIMS_KEYS = new WeakMap<ReadonlyMap<string, unknown>, string>();

function claimsKey(claims: ReadonlyMap<string, unknown>): string {
  let k = CLAIMS_KEYS.get(claims);
  if (k === undefined) {
    k = JSON.stringify([...claims], (_, v: unknown) =>
      typeof v === 'bigint' ? { bigint: String(v) } : v,
    );
    CLAIMS_KEYS.set(claims, k);
  }
  return k;
}
