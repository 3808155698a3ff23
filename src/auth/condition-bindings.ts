import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { ConditionInput, ConditionValue } from './condition-types.js';

/** At most this many token claims are bound into `token.claims`. */
const MAX_TOKEN_CLAIMS = 64;
/** No constants: one object, as every prototype here is (a fresh one per call is slow). */
const NONE: Record<string, unknown> = Object.freeze({});

/**
 * The CEL variables of one decision's input, as the planned expression reads them, and the
 * expression's folded constants (condition-fold.ts).
 */
export function bindings(input: ConditionInput, constants: Record<string, unknown> = NONE) {
  const claims = new Map<string, unknown>();
  for (const [k, v] of input.claims) {
    if (claims.size >= MAX_TOKEN_CLAIMS) break;
    claims.set(k, v);
  }
  // The constants are the prototype, not spread in: a spread per evaluation costs more than
  // the evaluation itself (the planner reads variables by plain property access).
  return Object.assign(Object.create(constants) as object, {
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
  }) as never;
}

/** The values `reads` names, as JSON (the check API's proof shows them). */
export function valuesRead(
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
