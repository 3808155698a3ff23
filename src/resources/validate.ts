import { z } from 'zod';
import { invalidArgument, type FieldViolation } from '../core/rpc-error.js';
import { unsafeTextIn } from '../core/safe-text.js';

export const NAME_PATTERN = /^[a-z0-9 ._-]{1,}$/;
export const DESCRIPTION_PATTERN = /^[\S ]{0,512}$/u;

/** The one message for a name that only dots make, or that a space begins or ends. */
export const NAME_SHAPE_ERROR = 'name must not be only dots, nor begin or end with a space';

/**
 * Whether a name (already of NAME_PATTERN) reads as itself in a path of names: not `.`,
 * `..` or any run of dots alone (which a reader, or a tool joining paths, takes for "here"
 * or "up"), and no leading or trailing space (invisible, and trimmed by many tools, so
 * `" team"` and `"team"` would look the same). Refused for every name written from now on;
 * a name stored before stays as it is, and a path resolves it only spelled exactly.
 */
export function isPlainName(name: string): boolean {
  return !/^\.+$/.test(name) && name.trim() === name;
}

/** `name` as groups, identities, roles and the rest spell it. */
export const nameSchema = z
  .string({
    error: (iss) => (iss.input === undefined ? 'name is required' : 'name must be a string'),
  })
  .regex(NAME_PATTERN, {
    error: 'name must be lowercase letters a-z, digits, spaces, dots, dashes or underscores',
  })
  .max(63, { error: 'name must be at most 63 characters' })
  .refine(isPlainName, { error: NAME_SHAPE_ERROR });

export const descriptionSchema = z
  .string({ error: 'description must be a string' })
  .regex(DESCRIPTION_PATTERN, {
    error: 'description must be at most 512 characters with no line breaks or tabs',
  });

/**
 * Validate an input body against a schema. Before any schema, every string in the body
 * (keys too) must be storable text: no NUL, no lone surrogates (see `core/safe-text.ts`).
 *
 * @throws RpcError INVALID_ARGUMENT with a BadRequest naming every failed field.
 */
export function parseInput<S extends z.ZodType>(schema: S, body: unknown, prefix = ''): z.infer<S> {
  const unsafe = unsafeTextIn(body);
  if (unsafe.length > 0) {
    throw invalidArgument(
      unsafe.map(([field, description]) => ({ field: prefix + field, description })),
    );
  }
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  const violations: FieldViolation[] = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = prefix + path || prefix.replace(/\.$/, '') || 'body';
    let description = issue.message;
    if (issue.code === 'unrecognized_keys') {
      return {
        field: issue.keys.map((k) => prefix + (path ? `${path}.` : '') + k).join(', '),
        description: 'unknown field',
      };
    }
    if (issue.code === 'invalid_type' && issue.input === undefined)
      description = `${path || 'value'} is required`;
    return { field, description };
  });
  throw invalidArgument(violations);
}

/** Remove output-only keys that clients echo back; they are never taken from input. */
export function withoutKeys(
  body: Record<string, unknown>,
  keys: readonly string[],
): Record<string, unknown> {
  // fromEntries defines own properties: a `__proto__` key stays a key (and is then refused
  // as unknown) instead of replacing the copy's prototype.
  return Object.fromEntries(Object.entries(body).filter(([k]) => !keys.includes(k)));
}
