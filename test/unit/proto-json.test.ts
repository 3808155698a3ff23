import {
  ScalarType,
  toBinary,
  type DescField,
  type DescMessage,
  type JsonValue,
} from '@bufbuild/protobuf';
import { EmptySchema, StructSchema } from '@bufbuild/protobuf/wkt';
import test from 'ava';
import fc from 'fast-check';
import { ListGroupsResponseSchema } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { messageOfJson, writeDirectly } from '../../src/grpc/proto-json.js';
import { ALL_API_SERVICES } from '../../src/features.js';

/**
 * writeDirectly writes proto3 JSON as protobuf without making the message (for the gRPC
 * fast path). Its promise: for any JSON at all, either undefined (the caller then makes
 * the message) or exactly the bytes of toBinary(messageOfJson(…)). Here every output message of the API, fed JSON generated from its
 * own schema: mostly well-formed, with the shapes that must take the slow path mixed in.
 */

/** What a call gave: the bytes, or the error's message. */
function outcome(f: () => Uint8Array): { bytes: number[] } | { error: string } {
  try {
    return { bytes: [...f()] };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * JSON for the messages, in two kinds. `wire`: what a wire mapping writes (valid values of
 * each field's type, timestamps from toISOString), which the direct writer must take
 * whole. `any`: that, with what must go the other way mixed in (numeric strings, offsets,
 * out-of-range numbers, wrong types, nulls in lists, fields under their proto names).
 */
type Kind = 'wire' | 'any';

/** toISOString in the range a Timestamp holds (0001 to 9999), and any Date's. */
const isoTime = fc
  .date({
    noInvalidDate: true,
    min: new Date('0001-01-01T00:00:00Z'),
    max: new Date('9999-12-31T23:59:59.999Z'),
  })
  .map((d) => d.toISOString());
const anyIsoTime = fc.date({ noInvalidDate: true }).map((d) => d.toISOString());

function timestamp(kind: Kind): fc.Arbitrary<JsonValue> {
  if (kind === 'wire') return isoTime;
  return fc.oneof(
    { weight: 4, arbitrary: anyIsoTime },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.integer({ min: 0, max: 10_000 }),
          fc.integer({ min: 0, max: 13 }),
          fc.integer({ min: 0, max: 32 }),
          fc.integer({ min: 0, max: 24 }),
          fc.stringMatching(/^[0-9]{0,10}$/),
          fc.constantFrom('Z', '+01:00', '-00:00', 'z', ''),
        )
        .map(
          ([y, mo, d, h, frac, zone]) =>
            `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:00:59${frac ? `.${frac}` : ''}${zone}`,
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<JsonValue>(
        '1970-01-01T00:00:00Z',
        '1970-01-01T00:00:00.000000000Z',
        '0001-01-01T00:00:00Z',
        '9999-12-31T23:59:59.999999999Z',
        '1969-12-31T23:59:59.5Z',
        12,
        {},
      ),
    },
  );
}

/** Decimal strings fromJson reads as 64-bit integers but the direct writer leaves. */
const oddDecimals: JsonValue[] = [
  '007',
  '+5',
  '-0',
  ' 5',
  '1e3',
  '9007199254740993',
  '1234567890123456',
];

/** 64-bit integers as proto3 JSON writes them: canonical decimal strings. */
function decimals(min: number, max: number, kind: Kind): fc.Arbitrary<JsonValue> {
  const canonical = fc
    .oneof(
      fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }),
      fc.constantFrom(0, min, max),
    )
    .map((n) => String(n));
  return kind === 'wire' ? canonical : fc.oneof(canonical, fc.constantFrom(...oddDecimals));
}

function scalar(type: ScalarType, kind: Kind): fc.Arbitrary<JsonValue> {
  const odd = fc.constantFrom<JsonValue>('', '7', ' 7', '1e3', 1.5, -0, true, 'x', []);
  const mixed = (valid: fc.Arbitrary<JsonValue>, edges: JsonValue[]) =>
    kind === 'wire'
      ? valid
      : fc.oneof(
          { weight: 4, arbitrary: valid },
          { weight: 1, arbitrary: fc.constantFrom(...edges) },
          { weight: 1, arbitrary: odd },
        );
  const int = (min: number, max: number, edges: JsonValue[] = []) =>
    mixed(fc.oneof(fc.integer({ min, max }), fc.constantFrom(0, -0, min, max)), [
      min - 1,
      max + 1,
      ...edges,
    ]);
  switch (type) {
    case ScalarType.STRING:
      return mixed(
        fc.oneof(
          { weight: 6, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
          // Lone surrogates: both sides must write them alike.
          { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
          { weight: 1, arbitrary: fc.constant('') },
        ),
        [0, false],
      );
    case ScalarType.BOOL:
      return mixed(fc.boolean(), ['true', 0]);
    case ScalarType.INT32:
      return int(-0x80000000, 0x7fffffff);
    case ScalarType.UINT32:
      return int(0, 0xffffffff);
    // proto3 JSON writes 64-bit integers as decimal strings (the REST door's totalCount).
    case ScalarType.INT64:
      return fc.oneof(
        int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, [2 ** 60, ...oddDecimals]),
        decimals(-1e15 + 1, 1e15 - 1, kind),
      );
    case ScalarType.UINT64:
      return fc.oneof(
        int(0, Number.MAX_SAFE_INTEGER, [2 ** 60, '-1', ...oddDecimals]),
        decimals(0, 1e15 - 1, kind),
      );
    default:
      return fc.oneof(fc.integer(), fc.double(), odd);
  }
}

const messages = new Map<string, fc.Arbitrary<JsonValue>>();

function value(f: DescField, depth: number, kind: Kind): fc.Arbitrary<JsonValue> {
  const one = (): fc.Arbitrary<JsonValue> => {
    if (f.fieldKind === 'enum' || (f.fieldKind !== 'scalar' && 'enum' in f && f.enum))
      return fc.constantFrom<JsonValue>('ENUM_VALUE', 0, 1);
    if (f.message) return message(f.message, kind, depth + 1);
    return scalar((f as { scalar: ScalarType }).scalar, kind);
  };
  const item =
    kind === 'wire'
      ? one()
      : fc.oneof({ weight: 12, arbitrary: one() }, { weight: 1, arbitrary: fc.constant(null) });
  switch (f.fieldKind) {
    case 'list':
      return fc.array(item, { maxLength: 3 });
    case 'map':
      return fc.dictionary(
        fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('1', '10', '2', '-1', '__proto__x')),
        item,
        { maxKeys: 3 },
      );
    default:
      return one();
  }
}

/** A JSON object for `desc`: some fields set, some null, (any) odd keys now and then. */
function message(desc: DescMessage, kind: Kind, depth = 0): fc.Arbitrary<JsonValue> {
  if (desc.typeName === 'google.protobuf.Timestamp') return timestamp(kind);
  if (depth > 3) return fc.constant({});
  const key = `${desc.typeName} ${kind}`;
  const known = messages.get(key);
  if (known) return known;
  const parts: Record<string, fc.Arbitrary<JsonValue | undefined>> = {};
  for (const f of desc.fields) {
    // A wire mapping leaves out what the message cannot take directly (OSV's Structs).
    const direct =
      !f.message ||
      f.message.typeName === 'google.protobuf.Timestamp' ||
      !f.message.typeName.startsWith('google.protobuf.');
    if (kind === 'wire' && (f.fieldKind === 'enum' || !direct)) continue;
    parts[f.jsonName] = fc.oneof(
      { weight: 5, arbitrary: value(f, depth, kind) },
      { weight: 2, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constant(null) },
    );
  }
  const names = desc.fields.filter((f) => f.name !== f.jsonName).map((f) => f.name);
  const extra =
    kind === 'wire'
      ? fc.constant(null)
      : fc.option(fc.constantFrom(...names, 'noSuchField'), { freq: 8 });
  const arb = fc
    .tuple(fc.record(parts), extra, fc.jsonValue({ maxDepth: 1 }))
    .map(([obj, extraKey, v]) => {
      const out: Record<string, JsonValue> = {};
      for (const [k, x] of Object.entries(obj)) if (x !== undefined) out[k] = x;
      if (extraKey !== null) out[extraKey] = v as JsonValue;
      return out as JsonValue;
    });
  messages.set(key, arb);
  return arb;
}

// Unary answers only: the direct writer serves the unary fast path (a streamed answer, the
// advisory import's, goes through Connect).
const outputs = [
  ...new Map(
    ALL_API_SERVICES.flatMap((s) =>
      s.methods
        .filter((m) => m.methodKind === 'unary')
        .map((m) => [m.output.typeName, m.output] as const),
    ),
  ).values(),
];

test('wire-shaped JSON of every output message is written directly, to the same bytes', (t) => {
  for (const schema of outputs) {
    fc.assert(
      fc.property(message(schema, 'wire'), (json) => {
        const direct = writeDirectly(schema, json);
        if (direct === undefined) throw new Error(`${schema.typeName}: not written directly`);
        const made = toBinary(schema, messageOfJson(schema, json));
        if (Buffer.compare(direct, made) !== 0) throw new Error(`${schema.typeName}: bytes differ`);
      }),
      { numRuns: 200 },
    );
  }
  t.pass();
});

test('any JSON of every output message: written directly only as the message path writes it', (t) => {
  let direct = 0;
  let runs = 0;
  for (const schema of outputs) {
    fc.assert(
      fc.property(message(schema, 'any'), (json) => {
        runs++;
        const bytes = writeDirectly(schema, json);
        if (bytes === undefined) return; // the caller takes the message path
        direct++;
        // Written directly: the message path must succeed, with these bytes.
        const made = outcome(() => toBinary(schema, messageOfJson(schema, json)));
        const fast = { bytes: [...bytes] };
        if (JSON.stringify(fast) !== JSON.stringify(made))
          throw new Error(`${schema.typeName}: ${JSON.stringify(fast)} vs ${JSON.stringify(made)}`);
      }),
      { numRuns: 300 },
    );
  }
  // Both ways must be exercised: odd JSON left to the message path, the rest written.
  t.true(direct > runs / 10 && direct < runs, `${direct} of ${runs} written directly`);
});

test('what the direct writer leaves: well-known types with JSON forms of their own', (t) => {
  t.deepEqual(writeDirectly(EmptySchema, {}), new Uint8Array(0), 'Delete answers Empty');
  t.is(writeDirectly(StructSchema, {}), undefined);
});

test('a page of groups as the REST door writes them', (t) => {
  const at = '2026-11-25T09:48:10.123Z';
  const page: JsonValue = {
    groups: Array.from({ length: 50 }, (_, i) => ({
      uid: `org-abc/team-${i}`,
      name: `team-${i}`,
      description: i % 2 ? '' : 'a team',
      resourceLimits: (i % 3 ? {} : { repos: i, '10': 0 }) as Record<string, number>,
      verified: i % 5 === 0,
      createTime: at,
      updateTime: at,
    })),
    nextPageToken: 'tok',
    totalCount: '123456', // int64: a decimal string in proto3 JSON, as the REST door writes it
    skipped: 0,
  };
  const direct = writeDirectly(ListGroupsResponseSchema, page);
  t.not(direct, undefined, 'written directly');
  t.deepEqual(
    direct,
    toBinary(ListGroupsResponseSchema, messageOfJson(ListGroupsResponseSchema, page)),
  );
  // The writer is shared between calls: a second answer starts clean.
  t.deepEqual(writeDirectly(ListGroupsResponseSchema, page), direct);
});
