import type { Presented } from '../resources/audit/audit-event.js';
import type { AnyKind } from './kinds.js';

// Each wire function takes its own domain type; the audit log hands them what the
// service of that very type recorded.
type AnyWire = (x: never) => unknown;

/**
 * A resource as the v2 API shows it: what audit records hold and CloudEvents carry. The
 * wire forms leave write-only secrets out (client secrets, invite codes after creation).
 * A type without a wire form is recorded as its JSON (every kind has one). `kinds` is
 * every kind (src/features.ts's KINDS), given by compose.ts, which knows the features.
 */
export function resourcePresenter(
  kinds: readonly AnyKind[],
): (type: string, resource: unknown) => Presented {
  const v2: ReadonlyMap<string, AnyWire> = new Map(kinds.map((k) => [k.type, k.toWire]));
  return (type, resource) => {
    const wire = v2.get(type) as ((x: unknown) => unknown) | undefined;
    const shown = wire ? wire(resource) : resource;
    return JSON.parse(JSON.stringify(shown)) as Presented;
  };
}
