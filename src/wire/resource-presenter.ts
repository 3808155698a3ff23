import type { Presented } from '../resources/audit/audit-event.js';
import { KINDS } from './kinds.js';

// Each wire function takes its own domain type; the audit log hands them what the
// service of that very type recorded.
type AnyWire = (x: never) => unknown;

/** The v2 wire form of every kind, by the type its records carry (wire/kinds.ts). */
const V2: ReadonlyMap<string, AnyWire> = new Map(KINDS.map((k) => [k.type, k.toWire]));

/**
 * A resource as the v2 API shows it: what audit records hold and CloudEvents carry. The
 * wire forms leave write-only secrets out (client secrets, invite codes after creation).
 * A type without a wire form is recorded as its JSON (every kind of wire/kinds.ts has one).
 */
export function presentResource(type: string, resource: unknown): Presented {
  const wire = V2.get(type) as ((x: unknown) => unknown) | undefined;
  const shown = wire ? wire(resource) : resource;
  return JSON.parse(JSON.stringify(shown)) as Presented;
}
