import { celEnv, CelScalar, isCelError, mapType, parse, plan } from '@bufbuild/cel';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';

/**
 * Conditional role bindings: a binding may carry a CEL expression that must hold, per
 * decision, for the binding to grant (docs/api.md, "Conditional role bindings").
 *
 * The expression is checked here against a declared environment before it is stored (an
 * unknown variable, a wrong type, a result that is not bool, a too long or too costly
 * expression are refused with the position they were found at), and compiled once per
 * distinct text into a bounded cache. Evaluation never throws: an error is a `false`
 * with the error's position, which the authorizer logs and treats as a denial.
 */

/** The longest expression accepted, in characters. */
export const MAX_CONDITION_LENGTH = 1_000;
/** The highest static cost accepted (see `costOf`: one per node, more for string scans). */
const MAX_CONDITION_COST = 200;
/** How many compiled expressions are remembered (distinct texts; cleared when full). */
const MAX_COMPILED = 4_096;
/** At most this many token claims are bound into `token.claims`. */
const MAX_TOKEN_CLAIMS = 64;

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
  evaluate(input: ConditionInput): ConditionResult;
}

/** Why an expression is refused: a message and the 0-based character offset it names. */
export class ConditionError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
  }
}

// ---- the environment's types ------------------------------------------------------------

type T =
  | 'bool'
  | 'int'
  | 'uint'
  | 'double'
  | 'string'
  | 'bytes'
  | 'timestamp'
  | 'duration'
  | 'null'
  | 'dyn'
  | { list: T }
  | { map: T }
  | { object: string; fields: Record<string, T> };

const GROUP: T = { object: 'group', fields: { path: 'string', uid: 'string' } };
const VARIABLES: Record<string, T> = {
  request: { object: 'request', fields: { time: 'timestamp', capability: 'string' } },
  resource: { object: 'resource', fields: { group: GROUP, type: 'string', name: 'string' } },
  token: { object: 'token', fields: { claims: { map: 'dyn' } } },
};

const name = (t: T): string =>
  typeof t === 'string'
    ? t
    : 'list' in t
      ? `list(${name(t.list)})`
      : 'map' in t
        ? `map(string, ${name(t.map)})`
        : t.object;

const same = (a: T, b: T): boolean => name(a) === name(b);
const NUMBERS = new Set(['int', 'uint', 'double']);
const ORDERED = new Set(['int', 'uint', 'double', 'string', 'timestamp', 'duration', 'bytes']);

type Expr = ReturnType<typeof parse>['expr'];

/** Methods and functions on a receiver type (or none): argument types and result. */
const METHODS: Record<string, { on: T; args: T[]; out: T; cost: number }[]> = {
  startsWith: [{ on: 'string', args: ['string'], out: 'bool', cost: 2 }],
  endsWith: [{ on: 'string', args: ['string'], out: 'bool', cost: 2 }],
  contains: [{ on: 'string', args: ['string'], out: 'bool', cost: 2 }],
  matches: [{ on: 'string', args: ['string'], out: 'bool', cost: 20 }],
  size: [
    { on: 'string', args: [], out: 'int', cost: 1 },
    { on: { map: 'dyn' }, args: [], out: 'int', cost: 1 },
  ],
};
const TIME_PARTS = [
  'getFullYear',
  'getMonth',
  'getDate',
  'getDayOfMonth',
  'getDayOfWeek',
  'getDayOfYear',
  'getHours',
  'getMinutes',
  'getSeconds',
];
for (const m of TIME_PARTS)
  METHODS[m] = [
    { on: 'timestamp', args: [], out: 'int', cost: 1 },
    { on: 'timestamp', args: ['string'], out: 'int', cost: 2 },
  ];

const FUNCTIONS: Record<string, { args: T[]; out: T }[]> = {
  timestamp: [{ args: ['string'], out: 'timestamp' }],
  duration: [{ args: ['string'], out: 'duration' }],
  string: [
    { args: ['string'], out: 'string' },
    { args: ['int'], out: 'string' },
    { args: ['timestamp'], out: 'string' },
    { args: ['dyn'], out: 'string' },
  ],
  int: [
    { args: ['int'], out: 'int' },
    { args: ['string'], out: 'int' },
    { args: ['timestamp'], out: 'int' },
  ],
  size: [
    { args: ['string'], out: 'int' },
    { args: [{ map: 'dyn' }], out: 'int' },
  ],
};

/** Accepts `actual` where `want` is expected (dyn stands for anything). */
const fits = (actual: T, want: T): boolean =>
  actual === 'dyn' ||
  want === 'dyn' ||
  same(actual, want) ||
  (typeof want !== 'string' && 'list' in want && typeof actual !== 'string' && 'list' in actual);

class Checker {
  cost = 0;
  readonly reads = new Set<string>();

  constructor(private readonly positions: Record<string, number>) {}

  private at(e: Expr): number {
    return this.positions[String(e.id)] ?? 0;
  }

  private fail(e: Expr, message: string): never {
    throw new ConditionError(message, this.at(e));
  }

  /** The dotted name of a chain of selects on a variable (`resource.group.path`), if it is one. */
  private dotted(e: Expr): string | undefined {
    if (e.exprKind.case === 'identExpr') return e.exprKind.value.name;
    if (
      e.exprKind.case === 'selectExpr' &&
      !e.exprKind.value.testOnly &&
      e.exprKind.value.operand
    ) {
      const base = this.dotted(e.exprKind.value.operand);
      return base === undefined ? undefined : `${base}.${e.exprKind.value.field}`;
    }
    return undefined;
  }

  check(e: Expr): T {
    this.cost += 1;
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind.case;
        const map: Record<string, T> = {
          boolValue: 'bool',
          int64Value: 'int',
          uint64Value: 'uint',
          doubleValue: 'double',
          stringValue: 'string',
          bytesValue: 'bytes',
          nullValue: 'null',
        };
        const t = c === undefined ? undefined : map[c];
        if (t === undefined) this.fail(e, `unsupported constant`);
        return t;
      }
      case 'identExpr': {
        const t = VARIABLES[k.value.name];
        if (t === undefined) this.fail(e, `undeclared reference to '${k.value.name}'`);
        return t;
      }
      case 'selectExpr': {
        const operand = k.value.operand;
        if (operand === undefined) this.fail(e, 'select without an operand');
        const base = this.check(operand);
        let out: T;
        if (base === 'dyn') out = 'dyn';
        else if (typeof base !== 'string' && 'map' in base) out = base.map;
        else if (typeof base !== 'string' && 'object' in base) {
          const f = base.fields[k.value.field];
          if (f === undefined) this.fail(e, `undefined field '${k.value.field}' of ${base.object}`);
          out = f;
        } else this.fail(e, `type '${name(base)}' has no field '${k.value.field}'`);
        if (k.value.testOnly) return 'bool';
        const d = this.dotted(e);
        if (d !== undefined) {
          // Record the widest read: `resource.group.path` reads that, not `resource.group`.
          const parent = d.slice(0, d.lastIndexOf('.'));
          this.reads.delete(parent);
          if (![...this.reads].some((r) => r.startsWith(`${d}.`))) this.reads.add(d);
          if (typeof out !== 'string' && 'map' in out) this.reads.add(d);
        }
        return out;
      }
      case 'listExpr': {
        const types = k.value.elements.map((x) => this.check(x));
        const first = types[0];
        const elem = first !== undefined && types.every((t) => same(t, first)) ? first : 'dyn';
        return { list: elem };
      }
      case 'callExpr':
        return this.call(e, k.value.function, k.value.target, k.value.args);
      case 'structExpr':
        return this.fail(e, 'map and message literals are not supported');
      case 'comprehensionExpr':
        return this.fail(
          e,
          'macros over lists and maps (all, exists, map, filter) are not supported',
        );
      default:
        return this.fail(e, 'unsupported expression');
    }
  }

  private call(e: Expr, fn: string, target: Expr | undefined, args: Expr[]): T {
    if (target !== undefined) {
      const on = this.check(target);
      const argTypes = args.map((a) => this.check(a));
      const overloads = METHODS[fn];
      if (overloads === undefined) this.fail(e, `undeclared method '${fn}'`);
      const o = overloads.find(
        (o) =>
          fits(on, o.on) &&
          o.args.length === argTypes.length &&
          argTypes.every((a, i) => fits(a, o.args[i]!)),
      );
      if (o === undefined)
        this.fail(
          e,
          `no matching overload for '${fn}' on '${name(on)}' with (${argTypes.map(name).join(', ')})`,
        );
      this.cost += o.cost;
      if (fn === 'matches' && args[0]?.exprKind.case !== 'constExpr')
        this.fail(e, "the pattern of 'matches' must be a string literal");
      return o.out;
    }
    const types = args.map((a) => this.check(a));
    const [a, b, c] = types;
    const num = (t: T | undefined) => t !== undefined && (t === 'dyn' || NUMBERS.has(t as string));
    switch (fn) {
      case '_&&_':
      case '_||_':
        if (!types.every((t) => fits(t, 'bool'))) this.fail(e, `'${fn}' needs bool operands`);
        return 'bool';
      case '!_':
        if (!fits(a!, 'bool')) this.fail(e, "'!' needs a bool operand");
        return 'bool';
      case '_?_:_':
        if (!fits(a!, 'bool')) this.fail(e, 'the condition of ?: must be bool');
        return same(b!, c!) ? b! : 'dyn';
      case '_==_':
      case '_!=_':
        if (!(fits(a!, b!) || (num(a) && num(b)) || a === 'null' || b === 'null'))
          this.fail(e, `cannot compare '${name(a!)}' with '${name(b!)}'`);
        return 'bool';
      case '_<_':
      case '_<=_':
      case '_>_':
      case '_>=_': {
        const ordered = (t: T) => t === 'dyn' || (typeof t === 'string' && ORDERED.has(t));
        if (!ordered(a!) || !ordered(b!) || !(fits(a!, b!) || (num(a) && num(b))))
          this.fail(e, `cannot order '${name(a!)}' and '${name(b!)}'`);
        return 'bool';
      }
      case '@in':
        if (typeof b === 'string' ? b !== 'dyn' : !('list' in b!) && !('map' in b!))
          this.fail(e, `'in' needs a list or a map, not '${name(b!)}'`);
        return 'bool';
      case '_[_]':
        if (a === undefined || a === 'dyn') return 'dyn';
        if (typeof a !== 'string' && 'map' in a) {
          if (!fits(b!, 'string')) this.fail(e, 'a map is indexed by string');
          return a.map;
        }
        if (typeof a !== 'string' && 'list' in a) {
          if (!fits(b!, 'int')) this.fail(e, 'a list is indexed by int');
          return a.list;
        }
        return this.fail(e, `type '${name(a!)}' cannot be indexed`);
      case '_+_':
        if (same(a!, b!) && ['int', 'uint', 'double', 'string', 'duration'].includes(name(a!)))
          return a!;
        if (a === 'timestamp' && b === 'duration') return 'timestamp';
        if (a === 'duration' && b === 'timestamp') return 'timestamp';
        if (a === 'dyn' || b === 'dyn') return 'dyn';
        return this.fail(e, `cannot add '${name(a!)}' and '${name(b!)}'`);
      case '_-_':
        if (same(a!, b!) && ['int', 'uint', 'double', 'duration'].includes(name(a!))) return a!;
        if (a === 'timestamp' && b === 'timestamp') return 'duration';
        if (a === 'timestamp' && b === 'duration') return 'timestamp';
        if (a === 'dyn' || b === 'dyn') return 'dyn';
        return this.fail(e, `cannot subtract '${name(b!)}' from '${name(a!)}'`);
      case '_*_':
      case '_/_':
      case '_%_':
        if (num(a) && num(b) && (a === 'dyn' || b === 'dyn' || same(a!, b!)))
          return a === 'dyn' ? b! : a!;
        return this.fail(e, `'${fn.slice(1, -1)}' needs numbers of one type`);
      case '-_':
        if (num(a) && a !== 'uint') return a!;
        if (a === 'duration') return a;
        return this.fail(e, `cannot negate '${name(a!)}'`);
      default: {
        const overloads = FUNCTIONS[fn];
        if (overloads === undefined) this.fail(e, `undeclared function '${fn}'`);
        const o = overloads.find(
          (o) => o.args.length === types.length && types.every((t, i) => fits(t, o.args[i]!)),
        );
        if (o === undefined)
          this.fail(e, `no matching overload for '${fn}' with (${types.map(name).join(', ')})`);
        return o.out;
      }
    }
  }
}

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
  const checker = new Checker(positions);
  const out = checker.check(parsed.expr);
  if (out !== 'bool' && out !== 'dyn')
    throw new ConditionError(`the result must be bool, not '${name(out)}'`, 0);
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

function bindings(input: ConditionInput) {
  const claims = new Map<string, unknown>();
  for (const [k, v] of input.claims) {
    if (claims.size >= MAX_TOKEN_CLAIMS) break;
    claims.set(k, v);
  }
  return {
    request: new Map<string, unknown>([
      ['time', timestampFromMs(input.time)],
      ['capability', input.capability],
    ]),
    resource: new Map<string, unknown>([
      [
        'group',
        new Map([
          ['path', input.group.path],
          ['uid', input.group.uid],
        ]),
      ],
      ['type', input.resource.type],
      ['name', input.resource.name],
    ]),
    token: new Map<string, unknown>([['claims', claims]]),
  } as never;
}

function valuesRead(
  reads: readonly string[],
  input: ConditionInput,
): Record<string, ConditionValue> {
  const all: Record<string, ConditionValue> = {
    'request.time': new Date(input.time).toISOString(),
    'request.capability': input.capability,
    'resource.group.path': input.group.path,
    'resource.group.uid': input.group.uid,
    'resource.type': input.resource.type,
    'resource.name': input.resource.name,
  };
  const out: Record<string, ConditionValue> = {};
  for (const r of reads) {
    const known = all[r];
    if (known !== undefined) out[r] = known;
    else if (r === 'resource.group') {
      out['resource.group.path'] = input.group.path;
      out['resource.group.uid'] = input.group.uid;
    } else if (r.startsWith('token.claims'))
      out['token.claims'] = JSON.parse(
        JSON.stringify(Object.fromEntries(input.claims), (_, v: unknown) =>
          typeof v === 'bigint' ? String(v) : v,
        ),
      ) as ConditionValue;
  }
  return out;
}
