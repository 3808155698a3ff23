import { INSTANT_MAX_MS, INSTANT_MIN_MS, INSTANT_RANGE_PROBLEM } from '../core/instant.js';
import { invalidField } from '../core/rpc-error.js';

/** What a google.protobuf.Duration's JSON form can say: ±10,000 years in seconds. */
const DURATION_MAX_SECONDS = 315_576_000_000n;
const NANOS_MAX = 999_999_999;
const SECONDS_MIN = BigInt(INSTANT_MIN_MS / 1000);
const SECONDS_MAX = BigInt(Math.floor(INSTANT_MAX_MS / 1000));

interface Wkt {
  $typeName: string;
  seconds: bigint;
  nanos: number;
}

function isWkt(v: object, typeName: string): v is Wkt {
  return (v as { $typeName?: unknown }).$typeName === typeName;
}

/** Why the well-known value `v` has no JSON form, or undefined when it has one. */
function problemOf(v: object): string | undefined {
  if (isWkt(v, 'google.protobuf.Timestamp')) {
    const ok = v.seconds >= SECONDS_MIN && v.seconds <= SECONDS_MAX;
    return ok && v.nanos >= 0 && v.nanos <= NANOS_MAX ? undefined : INSTANT_RANGE_PROBLEM;
  }
  if (isWkt(v, 'google.protobuf.Duration')) {
    const abs = v.seconds < 0n ? -v.seconds : v.seconds;
    const signs = (v.seconds <= 0n && v.nanos <= 0) || (v.seconds >= 0n && v.nanos >= 0);
    return abs <= DURATION_MAX_SECONDS && Math.abs(v.nanos) <= NANOS_MAX && signs
      ? undefined
      : 'must be a duration within ±315576000000 seconds';
  }
  return undefined;
}

/**
 * The JSON path (as the REST door names fields: `changes.0.createRoleBinding.notBefore`)
 * and problem of the first Timestamp or Duration in `msg` that proto3 JSON cannot carry,
 * or undefined. Walks messages, repeated fields, maps and oneofs (named by their case).
 */
function firstProblem(msg: object, path: string): [string, string] | undefined {
  for (const [k, v] of Object.entries(msg)) {
    if (k.startsWith('$') || typeof v !== 'object' || v === null || v instanceof Uint8Array)
      continue;
    const found = problemAt(v as object, path, k);
    if (found !== undefined) return found;
  }
  return undefined;
}

function problemAt(v: object, path: string, k: string): [string, string] | undefined {
  // A oneof: { case, value }, named on the wire by its case.
  const oneof = v as { case?: unknown; value?: unknown };
  if (typeof oneof.case === 'string' && 'value' in v) {
    return typeof oneof.value === 'object' && oneof.value !== null
      ? problemAt(oneof.value, path, oneof.case)
      : undefined;
  }
  const problem = problemOf(v);
  if (problem !== undefined) return [path + k, problem];
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      if (typeof item !== 'object' || item === null) continue;
      const found = problemAt(item, `${path}${k}.`, String(i));
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return firstProblem(v, `${path}${k}.`);
}

/**
 * Refuses a request message holding a Timestamp outside 0001-01-01T00:00:00Z …
 * 9999-12-31T23:59:59.999999999Z (or a Duration past its JSON range), which binary
 * protobuf can carry and proto3 JSON cannot: converting it would throw, a fault answered
 * INTERNAL. The message is the REST door's, on the same field.
 *
 * @throws RpcError INVALID_ARGUMENT naming the field.
 */
export function assertWellKnownInRange(msg: object): void {
  const found = firstProblem(msg, '');
  if (found !== undefined) throw invalidField(found[0], found[1]);
}
