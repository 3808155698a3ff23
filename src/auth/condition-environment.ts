import type { parse } from '@bufbuild/cel';

/**
 * The environment a condition is checked against: the declared variables, methods and
 * functions with their types, and how types are told apart (docs/api.md lists the same).
 */

/** A type of the environment: a scalar, a list, a map by string, or a declared object. */
export type CelType =
  | 'bool'
  | 'int'
  | 'uint'
  | 'double'
  | 'string'
  | 'bytes'
  | 'timestamp'
  | 'duration'
  | 'null'
  | 'dyn'
  | { list: CelType }
  | { map: CelType }
  | { object: string; fields: Record<string, CelType> };

const GROUP: CelType = { object: 'group', fields: { path: 'string', uid: 'string' } };
export const VARIABLES: Record<string, CelType> = {
  request: { object: 'request', fields: { time: 'timestamp', capability: 'string' } },
  resource: { object: 'resource', fields: { group: GROUP, type: 'string', name: 'string' } },
  token: { object: 'token', fields: { claims: { map: 'dyn' } } },
};

export const typeName = (t: CelType): string =>
  typeof t === 'string'
    ? t
    : 'list' in t
      ? `list(${typeName(t.list)})`
      : 'map' in t
        ? `map(string, ${typeName(t.map)})`
        : t.object;

export const same = (a: CelType, b: CelType): boolean => typeName(a) === typeName(b);
export const NUMBERS = new Set(['int', 'uint', 'double']);
export const ORDERED = new Set([
  'int',
  'uint',
  'double',
  'string',
  'timestamp',
  'duration',
  'bytes',
]);

export type Expr = ReturnType<typeof parse>['expr'];

/** Methods and functions on a receiver type (or none): argument types and result. */
export const METHODS: Record<
  string,
  { on: CelType; args: CelType[]; out: CelType; cost: number }[]
> = {
  startsWith: [{ on: 'string', args: ['string'], out: 'bool', cost: 2 }],
  endsWith: [{ on: 'string', args: ['string'], out: 'bool', cost: 2 }],
  contains: [{ on: 'string', args: ['string'], out: 'bool', cost: 2 }],
  matches: [{ on: 'string', args: ['string'], out: 'bool', cost: 20 }],
  size: [
    { on: 'string', args: [], out: 'int', cost: 1 },
    { on: { map: 'dyn' }, args: [], out: 'int', cost: 1 },
  ],
};
const TIME_PARTS = [
  'getFullYear',
  'getMonth',
  'getDate',
  'getDayOfMonth',
  'getDayOfWeek',
  'getDayOfYear',
  'getHours',
  'getMinutes',
  'getSeconds',
];
for (const m of TIME_PARTS)
  METHODS[m] = [
    { on: 'timestamp', args: [], out: 'int', cost: 1 },
    { on: 'timestamp', args: ['string'], out: 'int', cost: 2 },
  ];

export const FUNCTIONS: Record<string, { args: CelType[]; out: CelType }[]> = {
  timestamp: [{ args: ['string'], out: 'timestamp' }],
  duration: [{ args: ['string'], out: 'duration' }],
  string: [
    { args: ['string'], out: 'string' },
    { args: ['int'], out: 'string' },
    { args: ['timestamp'], out: 'string' },
    { args: ['dyn'], out: 'string' },
  ],
  int: [
    { args: ['int'], out: 'int' },
    { args: ['string'], out: 'int' },
    { args: ['timestamp'], out: 'int' },
  ],
  size: [
    { args: ['string'], out: 'int' },
    { args: [{ map: 'dyn' }], out: 'int' },
  ],
};

/** Accepts `actual` where `want` is expected (dyn stands for anything). */
export const fits = (actual: CelType, want: CelType): boolean =>
  actual === 'dyn' ||
  want === 'dyn' ||
  same(actual, want) ||
  (typeof want !== 'string' && 'list' in want && typeof actual !== 'string' && 'list' in actual);
