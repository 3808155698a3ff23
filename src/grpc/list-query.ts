import type { JsonValue } from '@bufbuild/protobuf';
import type { QueryParams } from '../core/list-request.js';

/**
 * A List request message (in its proto3 JSON form) as the query parameters the REST door
 * would have received: nested messages become dotted names (`uidp.descendantsOf`), as
 * grpc-gateway maps query parameters to fields. Both doors then go through the one
 * `parseListRequest`, so validation, defaults and messages are the same.
 */
export function listQueryOf(json: JsonValue, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return out;
  for (const [key, value] of Object.entries(json)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object' && !Array.isArray(value)) {
      Object.assign(out, listQueryOf(value, `${prefix}${key}.`));
    } else if (typeof value !== 'object') {
      // List requests have no repeated fields; scalars only.
      out[`${prefix}${key}`] = String(value);
    }
  }
  return out satisfies QueryParams;
}
