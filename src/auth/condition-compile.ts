import { celEnv, CelScalar, isCelError, mapType, parse, plan } from '@bufbuild/cel';
import { bindings, valuesRead } from './condition-bindings.js';
import { ConditionChecker } from './condition-checker.js';
import { typeName } from './condition-environment.js';
import { ConditionError } from './condition-error.js';
import { foldLiterals, readsGroup } from './condition-fold.js';
import { ResultMemo, resultKey } from './condition-memo.js';
import type { CompiledCondition, ConditionInput, ConditionResult } from './condition-types.js';

/** The longest expression accepted, in characters. */
export const MAX_CONDITION_LENGTH = 1_000;
/** The highest static cost accepted (see ConditionChecker: one per node, more for string scans). */
const MAX_CONDITION_COST = 200;
/** How many compiled expressions are remembered (distinct texts; cleared when full). */
const MAX_COMPILED = 4_096;

const ENV = celEnv({
  variables: {
    request: mapType(CelScalar.STRING, CelScalar.DYN),
    resource: mapType(CelScalar.STRING, CelScalar.DYN),
    token: mapType(CelScalar.STRING, CelScalar.DYN),
  },
});

/** How often an expression was compiled (not answered from the cache): a test's witness. */
export const compileStats = { compiled: 0 };

/**
 * Parse and check `expression` against the environment, without evaluating it. Remembered
 * by its text for the next caller, unless `remember` is false: what any caller may send (the
 * tester) must not push out what decisions use, nor clear the cache by filling it.
 * @throws ConditionError with the position of the first fault found.
 */
export function compileCondition(
  expression: string,
  o: { remember?: boolean } = {},
): CompiledCondition {
  const remember = o.remember ?? true;
  const hit = COMPILED.get(expression);
  if (hit !== undefined) return hit;
  compileStats.compiled++;
  if (expression.length > MAX_CONDITION_LENGTH)
    throw new ConditionError(
      `longer than ${MAX_CONDITION_LENGTH} characters`,
      MAX_CONDITION_LENGTH,
    );
  if (expression.trim() === '') throw new ConditionError('empty expression', 0);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expression);
  } catch (err) {
    throw parseError(expression, err);
  }
  const positions: Record<string, number> = {};
  for (const [id, offset] of Object.entries(parsed.sourceInfo?.positions ?? {}))
    positions[id] = offset;
  const checker = new ConditionChecker(positions);
  const out = checker.check(parsed.expr);
  if (out !== 'bool' && out !== 'dyn')
    throw new ConditionError(`the result must be bool, not '${typeName(out)}'`, 0);
  if (checker.cost > MAX_CONDITION_COST)
    throw new ConditionError(`costs ${checker.cost}, over the limit of ${MAX_CONDITION_COST}`, 0);
  if (parsed.expr === undefined) throw new ConditionError('empty expression', 0);
  const group = readsGroup(parsed.expr);
  // After checking: the folded names are no variables of the environment.
  const constants = foldLiterals(ENV, parsed.expr);
  const run = plan(ENV, parsed);
  const reads = [...checker.reads].sort();
  const key = resultKey(parsed.expr, constants);
  // Each result kept as a decision takes it (frozen, no values shown): shared, not copied.
  const memo = new ResultMemo<ConditionResult>();
  const compiled: CompiledCondition = {
    expression,
    reads,
    readsGroup: group,
    evaluate(input, e = {}) {
      const k = key?.of(input);
      let r = k === undefined ? undefined : memo.get(k);
      if (r === undefined) {
        r = Object.freeze({ ...outcome(input), values: NO_VALUES });
        if (k !== undefined) memo.set(k, r);
      }
      // Shown only where asked: a decision shows nothing, and skips the work.
      return e.values === false ? r : { ...r, values: valuesRead(reads, input) };
    },
    ...(key !== undefined ? { stableUntil: (now: number) => key.until(now) } : {}),
  };
  /** The expression run on `input`: its result, or the error that denies. */
  function outcome(input: ConditionInput): { result: boolean; error?: string } {
    let r: unknown;
    try {
      r = run(bindings(input, constants));
    } catch (err) {
      return { result: false, error: `evaluation failed: ${String(err)}` };
    }
    if (isCelError(r)) {
      const at = r.exprId === undefined ? 0 : (positions[String(r.exprId)] ?? 0);
      return { result: false, error: `${r.message} at position ${at}` };
    }
    if (typeof r !== 'boolean')
      return { result: false, error: 'the result is not a bool at position 0' };
    return { result: r };
  }
  if (!remember) return compiled;
  if (COMPILED.size >= MAX_COMPILED) COMPILED.clear();
  COMPILED.set(expression, compiled);
  return compiled;
}

const COMPILED = new Map<string, CompiledCondition>();
/** What a decision's result shows: nothing (one frozen object for all). */
const NO_VALUES: ConditionResult['values'] = Object.freeze({});

/** A condition that cannot be compiled any more: every evaluation is this error (a denial). */
export function brokenCondition(expression: string, message: string): CompiledCondition {
  return {
    expression,
    reads: [],
    readsGroup: false,
    evaluate: () => ({ result: false, values: {}, error: `does not compile: ${message}` }),
    stableUntil: () => Number.POSITIVE_INFINITY,
  };
}

/** The parser says `<input>:LINE:COL: message`; answer with an offset into the text. */
function parseError(expression: string, err: unknown): ConditionError {
  const msg = err instanceof Error ? err.message : String(err);
  const m = /^<input>:(\d+):(\d+): (.*)$/s.exec(msg);
  if (m === null) return new ConditionError(`syntax error: ${msg}`, 0);
  const lines = expression.split('\n');
  let offset = 0;
  for (let i = 0; i < Number(m[1]) - 1 && i < lines.length; i++) offset += lines[i]!.length + 1;
  return new ConditionError(`syntax error: ${m[3]}`, offset + Number(m[2]) - 1);
}
