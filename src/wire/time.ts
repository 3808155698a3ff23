import { z } from 'zod';

/** RFC 3339 UTC with millisecond precision, as every timestamp on the wire. */
export function ts(d: Date): string {
  return d.toISOString();
}

export function tsOpt(d: Date | null | undefined): string | undefined {
  return d ? d.toISOString() : undefined;
}

/** What `ts` writes, as the document and the wire types describe it. */
export const timestampSchema = z
  .string()
  .meta({ format: 'date-time', examples: ['2026-01-31T12:00:00.000Z'] });
