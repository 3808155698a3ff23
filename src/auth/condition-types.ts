/** The shapes of a conditional role binding's condition (docs/api.md, "Conditional role bindings"). */

/** A binding's condition as it is stored and shown. */
export interface Condition {
  expression: string;
  title?: string;
  description?: string;
}

/** What a condition is evaluated over: one decision's request. */
export interface ConditionInput {
  /** The decision's instant, epoch ms. */
  time: number;
  capability: string;
  group: { uid: string; path: string };
  resource: { type: string; name: string };
  /** The upstream claims of the token acted through; empty when none are known. */
  claims: ReadonlyMap<string, unknown>;
}

/** A value as the check API shows it: JSON. */
export type ConditionValue =
  string | number | boolean | null | ConditionValue[] | { [key: string]: ConditionValue };

/** A condition's result, with the values it read (for the check API's proof). */
export interface ConditionResult {
  result: boolean;
  /** Each variable the expression reads, by its dotted name, as a JSON-safe value. */
  values: Record<string, ConditionValue>;
  /** Why it did not evaluate (then `result` is false): a message with its position. */
  error?: string;
}

/** A condition checked and planned: evaluate it as often as needed. */
export interface CompiledCondition {
  readonly expression: string;
  /** The dotted variables it reads (`request.time`, `resource.group.path`, …), sorted. */
  readonly reads: readonly string[];
  /**
   * Whether it may read the resource's group (`resource.group…`, or `resource` whole): when
   * false, `input.group` is never read, and a decision need not look the group up.
   */
  readonly readsGroup: boolean;
  /**
   * `values: false` (a decision, which shows nothing): the result's `values` is `{}`, not
   * computed. Default true (the check API's proof, the tester).
   */
  evaluate(input: ConditionInput, o?: { values?: boolean }): ConditionResult;
  /**
   * Where the result depends on the time only through comparisons with literal instants:
   * the first instant after `now` at which the time alone may change it (+∞: never), so an
   * answer made from it at `now` holds, for the same other inputs, until then. Absent where
   * it reads the time otherwise (then every decision evaluates it).
   */
  stableUntil?(now: number): number;
}
