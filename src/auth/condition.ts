/**
 * Conditional role bindings: a binding may carry a CEL expression that must hold, per
 * decision, for the binding to grant (docs/api.md, "Conditional role bindings").
 *
 * The expression is checked against a declared environment before it is stored (an
 * unknown variable, a wrong type, a result that is not bool, a too long or too costly
 * expression are refused with the position they were found at), and compiled once per
 * distinct text into a bounded cache. Evaluation never throws: an error is a `false`
 * with the error's position, which the authorizer logs and treats as a denial.
 *
 * This module is the public face; the parts live beside it: the environment
 * (condition-environment.ts), the type and cost checker (condition-checker.ts), compiling
 * and the cache (condition-compile.ts), what an evaluation binds and shows
 * (condition-bindings.ts).
 */
export { brokenCondition, compileCondition, MAX_CONDITION_LENGTH } from './condition-compile.js';
export { ConditionError } from './condition-error.js';
export type {
  CompiledCondition,
  Condition,
  ConditionResult,
  ConditionValue,
} from './condition-types.js';
