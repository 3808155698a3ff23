import { z } from 'zod';
import { instantText } from '../core/instant.js';

/**
 * RFC 3339 UTC with millisecond precision, as every timestamp on the wire. Never throws:
 * a stored instant outside 0001-01-01 … 9999-12-31 (kept by an older release) is shown
 * clamped into that range, which both RFC 3339 and google.protobuf.Timestamp can carry, so
 * that one such row can never turn a read on any door into INTERNAL.
 */
export function ts(d: Date): string {
  return instantText(d);
}

export function tsOpt(d: Date | null | undefined): string | undefined {
  return d ? instantText(d) : undefined;
}

/** What `ts` writes, as the document and the wire types describe it. */
export const timestampSchema = z
  .string()
  .meta({ format: 'date-time', examples: ['2026-01-31T12:00:00.000Z'] });
