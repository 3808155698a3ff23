import { invalidField } from '../../core/rpc-error.js';
import { NAME_PATTERN } from '../validate.js';

/** How deep a path of names may go: far deeper than any tree people keep, and bounded. */
const MAX_PATH_SEGMENTS = 64;

/**
 * A path of names (`acme/platform/sre`) as its segments. A name never holds `/`
 * (NAME_PATTERN), so `/` separates them unambiguously; an empty segment (a leading,
 * trailing or doubled `/`) is refused rather than read as anything.
 *
 * @throws RpcError INVALID_ARGUMENT naming `field`.
 */
export function parseNamePath(field: string, value: string | undefined): string[] {
  if (value === undefined || value === '') throw invalidField(field, `${field} is required`);
  const segments = value.split('/');
  if (segments.length > MAX_PATH_SEGMENTS)
    throw invalidField(field, `at most ${MAX_PATH_SEGMENTS} names`);
  for (const s of segments) {
    if (s === '') throw invalidField(field, 'names are separated by single slashes');
    if (s.length > 63 || !NAME_PATTERN.test(s))
      throw invalidField(
        field,
        'each name is 1 to 63 of a-z, 0-9, space, dot, underscore and hyphen',
      );
  }
  return segments;
}
