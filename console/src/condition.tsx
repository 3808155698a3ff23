import { post } from './api';

/**
 * A role binding's condition (docs/api.md, "Conditional role bindings") as the console
 * shows it, and the server's condition tester (`conditions:evaluate`), which checks and
 * evaluates an expression over a request described in full, reading nothing stored.
 */

export interface BindingCondition {
  expression: string;
  title?: string;
  description?: string;
}

/** What the tester evaluates over; absent parts are empty on the server, the time is now. */
export interface ConditionInput {
  time?: string;
  capability?: string;
  group?: { uid?: string; path?: string };
  resource?: { type?: string; name?: string };
  claims?: Record<string, unknown>;
}

export interface ConditionAnswer {
  result: boolean;
  reads: string[];
  values: Record<string, unknown>;
  error?: { stage: 'check' | 'evaluation'; message: string; position: number };
}

export function evaluateCondition(
  expression: string,
  input: ConditionInput,
): Promise<ConditionAnswer> {
  return post<ConditionAnswer>('/iam/v2beta1/conditions:evaluate', { expression, input });
}

/**
 * A binding's condition in a table cell or a sentence: its title, the expression itself
 * (always: a title is a claim about the expression, not a replacement for it) and its
 * description. "None" for an unconditional binding, so no cell is ever blank.
 */
export function ConditionText({ condition }: { condition: BindingCondition | undefined }) {
  if (!condition) return <span class="muted">None</span>;
  return (
    <span class="condition">
      {condition.title ? <strong class="condition-title">{condition.title}</strong> : null}
      {condition.title ? ' ' : null}
      <code class="condition-expression">{condition.expression}</code>
      {condition.description ? (
        <span class="condition-description"> {condition.description}</span>
      ) : null}
    </span>
  );
}

/**
 * A conditional binding's condition under its role, in a binding table: "only if …". Nothing
 * for an unconditional binding, so a table of plain bindings is no wider for it.
 */
export function ConditionLine({ condition }: { condition: BindingCondition | undefined }) {
  if (!condition) return null;
  return (
    <div class="condition-line">
      Only if: <ConditionText condition={condition} />
    </div>
  );
}

/** A claim's value as typed: JSON where it parses as JSON (7, true, ["a"]), else the text. */
export function claimValue(text: string): unknown {
  const t = text.trim();
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return t;
  }
}

/** `name=value` lines into claims (a value read by `claimValue`); blank lines skipped. */
export function claimsOf(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (line.trim() === '' || i < 1) continue;
    out[line.slice(0, i).trim()] = claimValue(line.slice(i + 1));
  }
  return out;
}
