import { invalidField } from './rpc-error.js';

export type Direction = 'asc' | 'desc';

export interface OrderBy {
  /** The allow-listed field name as the client wrote it, normalised (e.g. `created_at`). */
  field: string;
  direction: Direction;
}

/**
 * Parse `order_by` (`field`, `field asc` or `field desc`) against an allow-list.
 * The field names are the database-style names the spec shows (`name`, `created_at`).
 *
 * @throws RpcError INVALID_ARGUMENT on `order_by` for anything not on the list.
 */
export function parseOrderBy(
  raw: string | undefined,
  allowed: readonly string[],
  fallback: OrderBy,
): OrderBy {
  if (raw === undefined || raw.trim() === '') return fallback;
  const parts = raw.trim().split(/\s+/);
  const [field, dir, ...rest] = parts;
  if (field === undefined || rest.length > 0 || field.includes(',')) {
    throw invalidField('order_by', 'must be a single field optionally followed by "asc" or "desc"');
  }
  if (!allowed.includes(field)) {
    throw invalidField('order_by', `cannot order by "${field}"; allowed: ${allowed.join(', ')}`);
  }
  if (dir !== undefined && dir !== 'asc' && dir !== 'desc') {
    throw invalidField('order_by', `direction must be "asc" or "desc", not "${dir}"`);
  }
  return { field, direction: dir ?? 'asc' };
}

export function formatOrderBy(o: OrderBy): string {
  return `${o.field} ${o.direction}`;
}
