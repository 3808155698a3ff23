import { invalidArgument, invalidField, type FieldViolation } from './rpc-error.js';

/**
 * What an update may touch. `mutable` maps each writable top-level JSON field to the
 * value it takes when a mask names it but the body leaves it out (AIP-134: reset).
 * `outputOnly` fields may appear in a body (clients echo resources back) and are ignored.
 */
export interface UpdateSpec {
  mutable: Readonly<Record<string, unknown>>;
  outputOnly: readonly string[];
}

/** `claim_match` → `claimMatch`: masks arrive in either spelling. */
function camel(path: string): string {
  return path.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Split an `updateMask` query value (`a,b` or repeated parameters) into paths. */
export function parseMask(raw: string | readonly string[] | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const parts = (typeof raw === 'string' ? [raw] : raw)
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return parts;
}

/**
 * Work out the patch an update applies.
 *
 * - no mask: every mutable field present in the body, and nothing else (spec §4.2 rule 1);
 * - a mask: exactly the named fields, taken from the body or reset when absent (rule 2);
 * - `*`: every mutable field, a full replacement.
 *
 * @throws RpcError INVALID_ARGUMENT naming `update_mask` for unknown or immutable paths, and
 *   naming the field for unknown body keys (a misspelt field must not be silently dropped).
 */
export function resolvePatch(
  body: Readonly<Record<string, unknown>>,
  mask: readonly string[] | undefined,
  spec: UpdateSpec,
): Record<string, unknown> {
  const violations: FieldViolation[] = [];
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(spec.mutable, key) && !spec.outputOnly.includes(key)) {
      violations.push({ field: key, description: 'unknown field' });
    }
  }
  if (violations.length > 0) throw invalidArgument(violations);

  if (mask === undefined || mask.length === 0) {
    const patch: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      if (Object.hasOwn(spec.mutable, key)) patch[key] = value;
    }
    return patch;
  }

  let paths: string[];
  if (mask.includes('*')) {
    if (mask.length > 1)
      throw invalidField('update_mask', '"*" cannot be combined with other paths');
    paths = Object.keys(spec.mutable);
  } else {
    paths = mask.map(camel);
    for (const path of paths) {
      if (Object.hasOwn(spec.mutable, path)) continue;
      const why = spec.outputOnly.includes(path)
        ? `field "${path}" is output only and cannot be updated`
        : `unknown field "${path}"`;
      violations.push({ field: 'update_mask', description: why });
    }
    if (violations.length > 0) throw invalidArgument(violations);
  }

  const patch: Record<string, unknown> = {};
  for (const path of paths) {
    patch[path] = Object.hasOwn(body, path) ? body[path] : spec.mutable[path];
  }
  return patch;
}
