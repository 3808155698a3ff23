import type { Presented } from './audit-event.js';

function isReference(v: unknown): v is { uid: string } {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as { uid?: unknown }).uid === 'string'
  );
}

/**
 * A recorded resource with every resource it refers to (a binding's identity, group and
 * role; an invite's role) reduced to `{ uid }`. A record is read, and delivered as an
 * event, by whoever may list the *changed* resource; the API shows that reader a reference
 * it cannot list by uid only (`reference-visibility.ts`), and a record must not show more:
 * the name, email and subject of a person the reader cannot see, say. The uid is what the
 * reference *is*, and whoever may see the rest reads it from the API.
 *
 * Applied when a change is recorded, and again when a record is read or delivered, so
 * records written before it show no more either.
 */
export function referencesAsUids(r: Presented | null): Presented | null {
  if (r === null) return null;
  const out: Presented = {};
  for (const [k, v] of Object.entries(r)) out[k] = isReference(v) ? { uid: v.uid } : v;
  return out;
}
