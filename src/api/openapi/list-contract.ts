import { z } from 'zod';
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  MAX_SKIP,
  type FilterKind,
  type ListSpec,
} from '../../core/list-request.js';
import { UIDP_PATTERN } from '../../core/uidp.js';
import type { JsonSchema, ParameterContract } from './contract.js';

/** Example values of a List's query parameters, by parameter name. */
export type ListQueryExample = Readonly<Record<string, string | number | boolean>>;

const UID: JsonSchema = { type: 'string', pattern: UIDP_PATTERN.source };

/** How parseListRequest checks a filter of each kind (core/list-request.ts). */
const FILTERS: Readonly<Record<FilterKind, { schema: JsonSchema; what: string }>> = {
  string: { schema: { type: 'string', maxLength: 1024 }, what: 'exact match' },
  uid: { schema: UID, what: 'a uid path, exact match' },
  boolean: { schema: { type: 'boolean' }, what: '`true` or `false`' },
  timestamp: { schema: { type: 'string', format: 'date-time' }, what: 'an RFC 3339 timestamp' },
  prefix: {
    schema: { type: 'string', maxLength: 1024 },
    what: 'the value starts with this text, case-sensitive (`%` and `_` are plain characters)',
  },
};

function query(name: string, description: string, schema: JsonSchema): ParameterContract {
  return { name, in: 'query', description, schema };
}

function orderBy(spec: ListSpec): ParameterContract {
  const { field, direction } = spec.defaultOrder;
  return query(
    'order_by',
    `A field to order by, optionally followed by \` asc\` or \` desc\`. Allowed: ` +
      `${spec.orderBy.map((f) => `\`${f}\``).join(', ')}. Default: \`${field} ${direction}\`.`,
    { type: 'string', enum: spec.orderBy.flatMap((f) => [f, `${f} asc`, `${f} desc`]) },
  );
}

/** `uidp.*` and the ListSpec's exact-match filters: what v1 and v2 lists share. */
function scopeAndFilters(spec: ListSpec): ParameterContract[] {
  return [
    query('uidp.descendants_of', 'Only what lies anywhere below this group (not itself).', UID),
    query('uidp.children_of', 'Only the direct children of this group.', UID),
    ...Object.entries(spec.filters).map(([name, kind]) =>
      query(
        name,
        `Filter: ${spec.filterNotes?.[name] ?? `${FILTERS[kind].what}.`}`,
        FILTERS[kind].schema,
      ),
    ),
  ];
}

function withExamples(params: ParameterContract[], example: ListQueryExample) {
  for (const name of Object.keys(example)) {
    if (!params.some((p) => p.name === name)) throw new Error(`no list parameter ${name}`);
  }
  return params.map((p) => (p.name in example ? { ...p, example: example[p.name] } : p));
}

/**
 * The v2 List parameters (spec §4.1) of one ListSpec, the same object parseListRequest
 * checks them against. grpc-gateway's camelCase spellings (`pageSize`, …) are accepted too.
 * @throws Error when `example` names a parameter the list does not have.
 */
export function listParameters(
  spec: ListSpec,
  example: ListQueryExample = {},
): ParameterContract[] {
  return withExamples(
    [
      query(
        'page_size',
        `Results per page (default ${DEFAULT_PAGE_SIZE}; 0 means the default; larger values ` +
          `are taken as ${MAX_PAGE_SIZE}).`,
        { type: 'integer', minimum: 0, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
      ),
      query(
        'page_token',
        'The nextPageToken of the previous page; bound to the same filters and order.',
        { type: 'string' },
      ),
      orderBy(spec),
      query(
        'skip',
        `Results to skip before the page starts (at most ${MAX_SKIP}; follow ` +
          'nextPageToken for deeper pages). Echoed as `skipped`.',
        { type: 'integer', minimum: 0, maximum: MAX_SKIP, default: 0 },
      ),
      ...scopeAndFilters(spec),
    ],
    example,
  );
}

/** v1 lists are unpaginated: no page parameters; `id` selects one resource. */
export function v1ListParameters(
  spec: ListSpec,
  example: ListQueryExample = {},
): ParameterContract[] {
  return withExamples(
    [
      query('id', 'Only the resource with this uid (an empty list when there is none).', UID),
      orderBy(spec),
      ...scopeAndFilters(spec),
    ],
    example,
  );
}

/** The v2 List envelope (spec §2): the plural key, nextPageToken, totalCount, skipped. */
export function listResponseSchema(plural: string, item: z.ZodType) {
  return z.object({
    [plural]: z.array(item),
    nextPageToken: z
      .string()
      .optional()
      .meta({ description: 'Absent on the last page; expires after three days.' }),
    totalCount: z
      .string()
      .regex(/^\d+$/)
      .meta({ description: 'All matching results across pages (int64 as a decimal string).' }),
    skipped: z.int().min(0).meta({ description: 'How many results `skip` skipped.' }),
  });
}

/** The v1 List envelope: every result in `items`. */
export function v1ListResponseSchema(item: z.ZodType) {
  return z.object({ items: z.array(item) });
}
