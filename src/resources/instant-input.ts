import { z } from 'zod';
import { INSTANT_RANGE_PROBLEM, instantMsOf, parseInstant } from '../core/instant.js';

/**
 * Every time an input body takes (a binding's window, a request's start, an invite's
 * expiry, a simulated binding's window, a static key's expiry): an RFC 3339 date-time in
 * 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999999999Z, read by core/instant.ts, as a Date.
 * Anything else is one message, `<field>: must be an RFC 3339 time between …`, on every
 * door and whichever database is behind (the database never sees it).
 */
export function instantSchema() {
  // A refinement then a transform, as z.iso.datetime() was: the issue stays on this field
  // inside a union (a transform's own issue would make the union report only itself).
  return z
    .string({ error: INSTANT_RANGE_PROBLEM })
    .refine((s) => instantMsOf(s) !== undefined, { error: INSTANT_RANGE_PROBLEM })
    .meta({ format: 'date-time', examples: ['2026-01-31T12:00:00Z'] })
    .transform((s) => new Date(instantMsOf(s) ?? Number.NaN));
}

/** Where an instant is taken as text and kept as text (a static key's expiry): the problem. */
export function instantProblem(s: string): string | undefined {
  return parseInstant(s) === undefined ? INSTANT_RANGE_PROBLEM : undefined;
}
