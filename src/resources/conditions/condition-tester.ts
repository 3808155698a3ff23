import { z } from 'zod';
import {
  compileCondition,
  ConditionError,
  MAX_CONDITION_LENGTH,
  type ConditionValue,
} from '../../auth/condition.js';
import type { Principal } from '../../auth/principal.js';
import { instantSchema } from '../instant-input.js';
import { parseInput } from '../validate.js';

/**
 * The condition tester (`conditions:evaluate`): a role binding's condition checked and
 * evaluated over a request the caller describes, exactly as the authorizer would evaluate
 * it, so an expression can be tried before a binding carries it. It reads no stored data:
 * every value (the group's uid and path too) is taken as given, so it tells nothing about
 * any resource, and any authenticated principal may ask.
 */

/** At most this many claims (the evaluator binds no more than 64 into `token.claims`). */
export const MAX_TESTED_CLAIMS = 64;
/** A claim's name, in characters. */
export const MAX_CLAIM_NAME_LENGTH = 128;
/** A claim's value, as JSON text: a token's claims are small, and nesting is bounded by it. */
export const MAX_CLAIM_VALUE_JSON = 2_048;
/** The largest body, in bytes: an expression, 64 claims at their bound, and the rest. */
export const MAX_CONDITION_TEST_BODY_BYTES = 160 * 1024;

const text = (field: string, max: number, what: string) =>
  z
    .string({ error: `${field} must be a string` })
    .max(max, { error: `${field} must be at most ${max} characters` })
    .meta({ description: what });

/** How deep a claim's value may nest (arrays and objects). */
const MAX_CLAIM_DEPTH = 8;

/**
 * Whether `v` is at most `limit` characters as JSON and nests at most MAX_CLAIM_DEPTH deep,
 * walked without recursion: a hostile body nested 80,000 deep must not reach anything
 * recursive (JSON.stringify would overflow the stack).
 */
function smallJson(v: unknown, limit: number): boolean {
  let size = 0;
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (depth > MAX_CLAIM_DEPTH) return false;
    if (typeof x === 'string') size += x.length + 2;
    else if (typeof x !== 'object' || x === null) size += String(x).length;
    else if (Array.isArray(x)) {
      size += 2 + x.length;
      for (const item of x) stack.push([item, depth + 1]);
    } else {
      for (const [k, item] of Object.entries(x)) {
        size += k.length + 4;
        stack.push([item, depth + 1]);
      }
      size += 2;
    }
    if (size > limit) return false;
  }
  return true;
}

const claimsSchema = z
  .record(z.string(), z.unknown(), {
    error: 'claims must be an object of claim names to JSON values',
  })
  .superRefine((claims, ctx) => {
    const names = Object.keys(claims);
    if (names.length > MAX_TESTED_CLAIMS) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_TESTED_CLAIMS} claims` });
      return;
    }
    // A name is never echoed back when it is itself the fault (it may be anything long).
    if (names.some((n) => n.length === 0 || n.length > MAX_CLAIM_NAME_LENGTH)) {
      ctx.addIssue({
        code: 'custom',
        message: `a claim name must be 1 to ${MAX_CLAIM_NAME_LENGTH} characters`,
      });
      return;
    }
    for (const n of names)
      if (!smallJson(claims[n], MAX_CLAIM_VALUE_JSON))
        ctx.addIssue({
          code: 'custom',
          path: [n],
          message:
            `a claim value must be at most ${MAX_CLAIM_VALUE_JSON} characters as JSON, ` +
            `nested at most ${MAX_CLAIM_DEPTH} deep`,
        });
  })
  .meta({
    description:
      `\`token.claims\`: up to ${MAX_TESTED_CLAIMS} claims, each a JSON value of at most ` +
      `${MAX_CLAIM_VALUE_JSON} characters, nested at most ${MAX_CLAIM_DEPTH} deep.`,
  });

export const conditionTestSchema = z.strictObject({
  expression: z
    .string({ error: 'expression must be a string' })
    .max(MAX_CONDITION_LENGTH, {
      error: `expression must be at most ${MAX_CONDITION_LENGTH} characters`,
    })
    .meta({ description: 'The CEL expression, as a binding’s `condition.expression` takes it.' }),
  input: z
    .strictObject({
      time: instantSchema().optional().meta({ description: '`request.time` (default: now).' }),
      capability: text('input.capability', 128, '`request.capability`').optional(),
      group: z
        .strictObject({
          uid: text('input.group.uid', 1024, '`resource.group.uid`, as given').optional(),
          path: text('input.group.path', 1024, '`resource.group.path`, as given').optional(),
        })
        .optional(),
      resource: z
        .strictObject({
          type: text('input.resource.type', 256, '`resource.type`').optional(),
          name: text('input.resource.name', 1024, '`resource.name`').optional(),
        })
        .optional(),
      claims: claimsSchema.optional(),
    })
    .optional()
    .meta({ description: 'The request the expression is evaluated over; absent parts are empty.' }),
});

/** Where and why the expression failed: a check (refused at create) or an evaluation. */
export interface ConditionTestError {
  stage: 'check' | 'evaluation';
  message: string;
  /** The 0-based character offset into the expression. */
  position: number;
}

export interface ConditionTestAnswer {
  result: boolean;
  /** The variables the expression reads (dotted names), sorted; empty when it does not check. */
  reads: string[];
  values: Record<string, ConditionValue>;
  error?: ConditionTestError;
}

/** `…message at position N` (the evaluator's words): the message and N apart. */
function splitPosition(message: string): { message: string; position: number } {
  const m = / at position (\d+)$/.exec(message);
  return m === null
    ? { message, position: 0 }
    : { message: message.slice(0, m.index), position: Number(m[1]) };
}

/**
 * Check `body.expression` and evaluate it over `body.input`. A fault in the expression is
 * an answer (`error`, with its position), not a refusal: only a malformed or oversized
 * request is INVALID_ARGUMENT.
 *
 * @param _caller the authenticated principal: any may ask, and nothing it names is read.
 * @throws RpcError INVALID_ARGUMENT for a body outside the schema or its bounds.
 */
export function testCondition(
  _caller: Principal,
  body: unknown,
  now: () => number = Date.now,
): ConditionTestAnswer {
  const req = parseInput(conditionTestSchema, body);
  const input = req.input ?? {};
  let compiled: ReturnType<typeof compileCondition>;
  try {
    // Not remembered: any caller may send any number of distinct texts, which must not push
    // the bindings' compiled conditions out of the shared cache (nor clear it by filling it).
    compiled = compileCondition(req.expression, { remember: false });
  } catch (err) {
    if (!(err instanceof ConditionError)) throw err;
    const { message } = splitPosition(err.message);
    return {
      result: false,
      reads: [],
      values: {},
      error: { stage: 'check', message, position: err.position },
    };
  }
  const r = compiled.evaluate({
    time: input.time?.getTime() ?? now(),
    capability: input.capability ?? '',
    group: { uid: input.group?.uid ?? '', path: input.group?.path ?? '' },
    resource: { type: input.resource?.type ?? '', name: input.resource?.name ?? '' },
    claims: new Map(Object.entries(input.claims ?? {})),
  });
  return {
    result: r.result,
    reads: [...compiled.reads],
    values: r.values,
    ...(r.error === undefined ? {} : { error: { stage: 'evaluation', ...splitPosition(r.error) } }),
  };
}
