import { ConditionError } from './condition-error.js';
import {
  FUNCTIONS,
  METHODS,
  NUMBERS,
  ORDERED,
  VARIABLES,
  fits,
  same,
  typeName as name,
  type Expr,
  type CelType as T,
} from './condition-environment.js';

/**
 * Type checks a parsed expression against the environment and adds up its static cost (one
 * per node, more for string scans: see METHODS), recording the dotted variables it reads.
 * @throws ConditionError at the first fault, with its position.
 */
export class ConditionChecker {
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
