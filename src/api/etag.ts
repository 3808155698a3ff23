import { hash } from 'node:crypto';
import type { Context } from 'koa';

/**
 * A strong entity tag of a resource: a hash of its wire form, so that any change a client
 * could see changes it, and equal representations share it.
 */
export function etagOf(wire: unknown): string {
  return etagOfJson(JSON.stringify(wire));
}

/** {@link etagOf} of a wire form already serialised, so an answer is stringified once. */
export function etagOfJson(json: string): string {
  const digest = hash('sha256', json, 'base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** The tags of an `If-Match` header (`*`, or a comma-separated list), or undefined if absent. */
export function ifMatchOf(ctx: Context): string[] | undefined {
  const raw = ctx.get('if-match').trim();
  if (raw === '') return undefined;
  return raw
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}
