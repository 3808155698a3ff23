import { celEnv, CelScalar, isCelError, mapType, parse, plan } from '@bufbuild/cel';
import { bindings, valuesRead } from './condition-bindings.js';
import { ConditionChecker } from './condition-checker.js';
import { typeName } from './condition-environment.js';
import { ConditionError } from './condition-error.js';
import type { CompiledCondition } from './condition-types.js';

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

/**
 * Parse and check `expression` against the environment, without evaluating it.
 * @throws ConditionError with the position of the first fault found.
 */
export function compileCondition(expression: string): CompiledCondition {
  const hit = COMPILED.get(expression);
  if (hit !== undefined) return hit;
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
  const run = plan(ENV, parsed);
  const reads = [...checker.reads].sort();
  const compiled: CompiledCondition = {
    expression,
    reads,
    evaluate(input) {
      const values = valuesRead(reads, input);
      let r: unknown;
      try {
        r = run(bindings(input));
      } catch (err) {
        return { result: false, values, error: `evaluation failed: ${String(err)}` };
      }
      if (isCelError(r)) {
        const at = r.exprId === undefined ? 0 : (positions[String(r.exprId)] ?? 0);
        return { result: false, values, error: `${r.message} at position ${at}` };
      }
      if (typeof r !== 'boolean')
        return { result: false, values, error: 'the result is not a bool at position 0' };
      return { result: r, values };
    },
  };
  if (COMPILED.size >= MAX_COMPILED) COMPILED.clear();
  COMPILED.set(expression, compiled);
  return compiled;
}

const COMPILED = new Map<string, CompiledCondition>();

/** A condition that cannot be compiled any more: every evaluation is this error (a denial). */
export function brokenCondition(expression: string, message: string): CompiledCondition {
  return {
    expression,
    reads: [],
    evaluate: () => ({ result: false, values: {}, error: `does not compile: ${message}` }),
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
