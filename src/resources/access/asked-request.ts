import type { Authorizer, RequestContext } from '../../auth/authorizer.js';
import type { Condition } from '../../auth/condition.js';
import type { CheckRequest, ExplainedCondition } from './access.js';

/** Whether a check names the request it asks about (a resource or claims). */
export function asksAbout(req: CheckRequest): boolean {
  return req.resource !== undefined || req.claims !== undefined;
}

/**
 * The request a check names, as a condition reads it. Only ever passed to `explain`: the
 * proof's evaluation, never a decision on what the caller itself may do.
 */
export function askedContext(req: CheckRequest): RequestContext {
  return {
    ...(req.resource !== undefined ? { resource: req.resource } : {}),
    ...(req.claims !== undefined ? { claims: new Map(Object.entries(req.claims)) } : {}),
  };
}

/**
 * A conditional binding's condition evaluated as the check `t` asks (at its capability and
 * group, with the request it names: `askedContext`), with its result and the values read.
 */
export async function explainAsked(
  authz: Authorizer,
  bindingUid: string,
  condition: Condition,
  t: CheckRequest,
): Promise<ExplainedCondition> {
  const { expression } = condition;
  const r = await authz.explain(bindingUid, expression, t.capability, t.groupUid, askedContext(t));
  return { ...condition, ...r };
}
