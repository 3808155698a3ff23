import { INSTANT_RANGE_PROBLEM, instantMsOf } from './instant.js';
import { parseOrderBy, type OrderBy } from './order-by.js';
import { invalidArgument, type FieldViolation } from './rpc-error.js';
import { unsafeTextReason } from './safe-text.js';
import { isValidUidp } from './uidp.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
/** skip costs O(skip) rows from the cursor, so it is bounded; deeper pages use the cursor. */
export const MAX_SKIP = 10_000;

/** How an exact-match filter's value is checked before it reaches a query. */
export type FilterKind = 'string' | 'uid' | 'boolean' | 'timestamp' | 'prefix';

/** What one List endpoint accepts. Every List in the service is described by one of these. */
export interface ListSpec {
  /** Names the resource kind in page-token fingerprints. */
  kind: string;
  /** Allow-listed `order_by` fields. */
  orderBy: readonly string[];
  defaultOrder: OrderBy;
  /** Allow-listed exact-match filters, keyed by query parameter name. */
  filters: Readonly<Record<string, FilterKind>>;
  /** What a filter means where its kind alone does not say (the OpenAPI description). */
  filterNotes?: Readonly<Record<string, string>>;
}

export interface UidpFilter {
  descendantsOf?: string;
  childrenOf?: string;
}

export interface ListRequest {
  pageSize: number;
  pageToken?: string;
  orderBy: OrderBy;
  skip: number;
  uidp: UidpFilter;
  filters: Record<string, string>;
}

export type QueryParams = Readonly<Record<string, string | string[] | undefined>>;

/** grpc-gateway accepts both spellings of every parameter; we do too. */
const ALIASES: Record<string, string> = {
  pageSize: 'page_size',
  pageToken: 'page_token',
  orderBy: 'order_by',
  'uidp.descendantsOf': 'uidp.descendants_of',
  'uidp.childrenOf': 'uidp.children_of',
  namePrefix: 'name_prefix',
  topLevel: 'top_level',
};

/**
 * Turn query parameters into a validated ListRequest.
 *
 * @throws RpcError INVALID_ARGUMENT with one field violation per bad or unknown parameter.
 */
export function parseListRequest(params: QueryParams, spec: ListSpec): ListRequest {
  const violations: FieldViolation[] = [];
  const values = new Map<string, string>();
  for (const [rawKey, rawValue] of Object.entries(params)) {
    if (rawValue === undefined) continue;
    // Own keys only: `__proto__` or `constructor` must not look up Object.prototype.
    const key = Object.hasOwn(ALIASES, rawKey) ? (ALIASES[rawKey] as string) : rawKey;
    const bad = paramViolation(key, rawValue);
    if (bad) violations.push(bad);
    else values.set(key, rawValue as string);
  }

  const int = (field: string, fallback: number): number => {
    const raw = values.get(field);
    if (raw === undefined || raw === '') return fallback;
    if (!/^-?\d+$/.test(raw)) {
      violations.push({ field, description: 'must be an integer' });
      return fallback;
    }
    const n = Number(raw);
    if (n < 0) violations.push({ field, description: 'must not be negative' });
    return n;
  };

  let pageSize = int('page_size', DEFAULT_PAGE_SIZE);
  if (pageSize === 0) pageSize = DEFAULT_PAGE_SIZE;
  pageSize = Math.min(pageSize, MAX_PAGE_SIZE);
  const skip = int('skip', 0);
  if (skip > MAX_SKIP) {
    violations.push({
      field: 'skip',
      description: `must be at most ${MAX_SKIP}; follow nextPageToken for deeper pages`,
    });
  }

  let orderBy = spec.defaultOrder;
  try {
    orderBy = parseOrderBy(values.get('order_by'), spec.orderBy, spec.defaultOrder);
  } catch (e) {
    violations.push({
      field: 'order_by',
      description: (e as Error).message.replace(/^Invalid argument: order_by: /, ''),
    });
  }

  const uidp: UidpFilter = {};
  for (const [param, prop] of [
    ['uidp.descendants_of', 'descendantsOf'],
    ['uidp.children_of', 'childrenOf'],
  ] as const) {
    const v = values.get(param);
    if (v === undefined || v === '') continue;
    if (!isValidUidp(v)) violations.push({ field: param, description: 'must be a uid path' });
    else uidp[prop] = v;
  }

  const filters: Record<string, string> = {};
  const known = new Set([
    'page_size',
    'page_token',
    'order_by',
    'skip',
    'uidp.descendants_of',
    'uidp.children_of',
  ]);
  for (const [key, value] of values) {
    if (known.has(key)) continue;
    const kind = Object.hasOwn(spec.filters, key) ? spec.filters[key] : undefined;
    if (kind === undefined) {
      violations.push({ field: key, description: 'unknown query parameter' });
      continue;
    }
    if (value === '') continue;
    const why = checkFilter(kind, value);
    if (why !== undefined) violations.push({ field: key, description: why });
    else filters[key] = normalFilter(kind, value);
  }

  if (violations.length > 0) throw invalidArgument(violations);
  const token = values.get('page_token');
  return {
    pageSize,
    ...(token ? { pageToken: token } : {}),
    orderBy,
    skip,
    uidp,
    filters,
  };
}

/** What is wrong with one raw parameter before its meaning is looked at, if anything. */
function paramViolation(key: string, value: unknown): FieldViolation | undefined {
  const badKey = unsafeTextReason(key);
  if (badKey !== undefined) return { field: 'query', description: `parameter names ${badKey}` };
  if (Array.isArray(value)) return { field: key, description: 'must be given at most once' };
  // A parser quirk (a `__proto__` parameter) must not hand a non-string further in.
  if (typeof value !== 'string') return { field: key, description: 'must be text' };
  const badValue = unsafeTextReason(value);
  return badValue === undefined ? undefined : { field: key, description: badValue };
}

/** A checked value as the store takes it: a time in one form (UTC, milliseconds). */
function normalFilter(kind: FilterKind, value: string): string {
  const ms = kind === 'timestamp' ? instantMsOf(value) : undefined;
  return ms === undefined ? value : new Date(ms).toISOString();
}

function checkFilter(kind: FilterKind, value: string): string | undefined {
  if (value.length > 1024) return 'is too long';
  switch (kind) {
    case 'uid':
      return isValidUidp(value) ? undefined : 'must be a uid path';
    case 'boolean':
      return value === 'true' || value === 'false' ? undefined : 'must be true or false';
    case 'timestamp':
      return instantMsOf(value) === undefined ? INSTANT_RANGE_PROBLEM : undefined;
    case 'string':
    case 'prefix':
      return undefined;
  }
}
