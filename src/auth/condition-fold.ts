import { isCelError, plan, type CelEnv } from '@bufbuild/cel';
import type { Expr } from './condition-environment.js';

/** The prefix of the names constants are bound under: no declared variable starts so. */
const CONSTANT = '__arbor_k';

/**
 * Fold `timestamp("…")` and `duration("…")` of a string literal into a constant, in place:
 * the call becomes a reference to a value converted once here, bound into every
 * evaluation by name (`constants`), instead of a string parsed on every decision. A literal
 * that does not convert is left as it is, so that it errs at evaluation exactly as before.
 * Call after checking: the checker never sees the names, and a user cannot write them.
 */
export function foldLiterals(env: CelEnv, root: Expr): Record<string, unknown> {
  const constants: Record<string, unknown> = {};
  let n = 0;
  const visit = (e: Expr): void => {
    const k = e.exprKind;
    if (k.case === 'selectExpr' && k.value.operand) visit(k.value.operand);
    else if (k.case === 'listExpr') k.value.elements.forEach(visit);
    else if (k.case === 'callExpr') {
      const [arg] = k.value.args;
      const literal =
        (k.value.function === 'timestamp' || k.value.function === 'duration') &&
        k.value.target === undefined &&
        k.value.args.length === 1 &&
        arg?.exprKind.case === 'constExpr' &&
        arg.exprKind.value.constantKind.case === 'stringValue';
      if (literal) {
        const value = plan(env, e)();
        if (isCelError(value)) return;
        const name = `${CONSTANT}${n++}`;
        constants[name] = value;
        e.exprKind = {
          case: 'identExpr',
          value: { $typeName: 'cel.expr.Expr.Ident', name },
        } as Expr['exprKind'];
        return;
      }
      if (k.value.target) visit(k.value.target);
      k.value.args.forEach(visit);
    }
  };
  visit(root);
  return constants;
}

/**
 * Whether `root` may read the resource's group: it names `resource` other than as
 * `resource.type` or `resource.name`. Errs towards true (then the group is looked up).
 */
export function readsGroup(root: Expr): boolean {
  const visit = (e: Expr): boolean => {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        return false;
      case 'identExpr':
        return k.value.name === 'resource';
      case 'selectExpr': {
        const o = k.value.operand;
        if (o === undefined) return true;
        if (
          !k.value.testOnly &&
          o.exprKind.case === 'identExpr' &&
          o.exprKind.value.name === 'resource' &&
          (k.value.field === 'type' || k.value.field === 'name')
        )
          return false;
        return visit(o);
      }
      case 'listExpr':
        return k.value.elements.some(visit);
      case 'callExpr':
        return (k.value.target !== undefined && visit(k.value.target)) || k.value.args.some(visit);
      default:
        return true;
    }
  };
  return visit(root);
}
