import {
  fromJson,
  ScalarType,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { FeatureSet_FieldPresence } from '@bufbuild/protobuf/wkt';

/**
 * The gRPC door answers with the REST door's wire mapping: each resource's proto3 JSON
 * (`toWire`), read as its message. This module is that one step, in two forms:
 * - {@link messageOfJson}: the message, for Connect (which encodes it itself);
 * - {@link writeDirectly}: the encoded bytes, for the unary fast path. Why: making a
 *   message from JSON and encoding it costs about 5 µs per resource, 150 µs for a page of
 *   50, more than the rest of the gRPC-only work of a call. A page's JSON is written as
 *   protobuf directly instead, by a writer compiled once per message type.
 *
 * The direct writer takes only what it is sure of: strings, bools, 32-bit integers given
 * as JSON numbers, 64-bit ones as safe integers or canonical decimal strings (proto3 JSON's
 * form for them), nested messages, repeated fields, string-keyed maps and
 * Timestamps in the `…Z` form. For JSON with anything else (a numeric string, an offset
 * timestamp, a field under its proto name, a null list item, or any value at all for an
 * enum, bytes, float, oneof or other well-known-type field) it answers undefined, and the
 * caller takes the message's path: `toBinary(messageOfJson(…))`. Where it answers, it
 * answers those very bytes (test/unit/proto-json.test.ts checks it, input by generated input).
 */

/** Options for answers: an OSV record may carry fields the message has no place for. */
const READ = { ignoreUnknownFields: true } as const;

/** `json` (the proto3 JSON of a `schema` message) as that message. */
export function messageOfJson<D extends DescMessage>(schema: D, json: JsonValue): MessageShape<D> {
  return fromJson(schema, json, READ);
}

/**
 * `json` encoded as a `schema` message, exactly as `toBinary(schema, messageOfJson(schema,
 * json))` would encode it; or undefined where the direct writer leaves `json` to that path.
 */
export function writeDirectly(schema: DescMessage, json: JsonValue): Uint8Array | undefined {
  const write = writerOf(schema);
  if (write === undefined || !isObject(json)) return undefined;
  // One writer for every call (the write is synchronous): its buffer is allocated once,
  // not grown from 128 bytes per answer. After a large answer it is let go.
  const w = shared;
  const ok = write(w, json);
  const bytes = w.finish(); // the bytes written (a copy), and the writer reset
  if (bytes.length > KEEP_BYTES) shared = new BinaryWriter();
  return ok ? bytes : undefined;
}

let shared = new BinaryWriter();
/** A writer whose last answer was larger than this is replaced (its buffer released). */
const KEEP_BYTES = 64 * 1024;

/** Writes one message's fields; false when the JSON holds something it does not take. */
type Write = (w: BinaryWriter, json: JsonObject) => boolean;
/** Writes one value (tag included); false as above. */
type WriteValue = (w: BinaryWriter, value: JsonValue) => boolean;

/** Per message type: its writer, or null when the type is left to protobuf-es. */
const writers = new WeakMap<DescMessage, Write | null>();

function writerOf(desc: DescMessage): Write | undefined {
  let write = writers.get(desc);
  if (write === undefined) {
    writers.set(desc, null); // a type that contains itself is left to protobuf-es
    write = compileMessage(desc);
    writers.set(desc, write);
  }
  return write ?? undefined;
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The well-known types whose proto3 JSON is not an object of their fields. */
const SPECIAL_JSON = new Set(
  [
    'Any',
    'Timestamp',
    'Duration',
    'FieldMask',
    'Struct',
    'Value',
    'ListValue',
    'DoubleValue',
    'FloatValue',
    'Int64Value',
    'UInt64Value',
    'Int32Value',
    'UInt32Value',
    'BoolValue',
    'StringValue',
    'BytesValue',
  ].map((n) => `google.protobuf.${n}`),
);

function compileMessage(desc: DescMessage): Write | null {
  // These have JSON forms of their own; Timestamp is handled as a field value.
  if (SPECIAL_JSON.has(desc.typeName)) return null;
  const fields: Write[] = [];
  // protobuf-es writes fields in field-number order.
  for (const f of [...desc.fields].sort((a, b) => a.number - b.number))
    fields.push(compileField(f));
  return (w, json) => {
    for (let i = 0; i < fields.length; i++) if (!fields[i]!(w, json)) return false;
    return true;
  };
}

function compileField(f: DescField): Write {
  const key = f.jsonName;
  // fromJson also reads a field under its proto name: such JSON takes the other path.
  const other = f.name !== f.jsonName ? f.name : undefined;
  const present: Present = (json) => {
    if (other !== undefined && json[other] !== undefined) return BAIL;
    const v = json[key];
    return v === null ? undefined : v; // null is "not set" (for the types written here)
  };
  const write = f.oneof === undefined ? compileValue(f, present) : null;
  if (write !== null) return write;
  // A field this writer does not take (an enum, bytes, a float, a oneof member, another
  // well-known type) is fine as long as it is not set; a null counts as set (a
  // google.protobuf.Value reads it as a value).
  return (_w, json) =>
    json[key] === undefined && (other === undefined || json[other] === undefined);
}

function compileValue(f: DescField, present: Present): Write | null {
  switch (f.fieldKind) {
    case 'scalar': {
      const write = scalarWriter(f.number, f.scalar);
      if (write === null) return null;
      // Implicit presence (proto3 without `optional`): a zero value is not written.
      const zero = f.presence === FeatureSet_FieldPresence.IMPLICIT ? zeroOf(f.scalar) : undefined;
      // proto3 JSON writes 64-bit integers as decimal strings ("0" is their zero).
      const zeroText = is64(f.scalar) ? '0' : undefined;
      return (w, json) => {
        const v = present(json);
        if (v === BAIL) return false;
        if (v === undefined || (zero !== undefined && (v === zero || v === zeroText))) return true;
        return write(w, v);
      };
    }
    case 'message': {
      const write = messageWriter(f.number, f.message);
      if (write === null) return null;
      return (w, json) => {
        const v = present(json);
        if (v === BAIL) return false;
        return v === undefined || write(w, v);
      };
    }
    case 'list':
      return compileList(f, present);
    case 'map':
      return compileMap(f, present);
    default:
      return null; // enums
  }
}

function is64(type: ScalarType): boolean {
  return type === ScalarType.INT64 || type === ScalarType.UINT64;
}

/** Canonical decimals of at most 15 digits: always a safe integer, read as fromJson reads them. */
const DECIMAL = /^(?:0|-?[1-9][0-9]{0,14})$/;

/** A 64-bit integer's JSON (a safe integer, or its canonical decimal string) as a number. */
function int64Of(v: JsonValue): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  return typeof v === 'string' && DECIMAL.test(v) ? Number(v) : undefined;
}

/** The JSON of a scalar's zero value, for the types scalarWriter takes (-0 === 0 too). */
function zeroOf(type: ScalarType): JsonValue {
  return type === ScalarType.STRING ? '' : type === ScalarType.BOOL ? false : 0;
}

/** A field's value in the JSON: undefined when not set, BAIL when not ours to read. */
type Present = (json: JsonObject) => JsonValue | undefined | typeof BAIL;
const BAIL = Symbol('bail');

function compileList(f: DescField & { fieldKind: 'list' }, present: Present): Write | null {
  let item: WriteValue | null;
  if (f.listKind === 'message') item = messageWriter(f.number, f.message);
  else if (f.listKind === 'scalar' && !f.packed) item = scalarWriter(f.number, f.scalar);
  else return null; // enums, packed numbers
  if (item === null) return null;
  const write = item;
  return (w, json) => {
    const v = present(json);
    if (v === BAIL) return false;
    if (v === undefined) return true;
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      if (x === null || !write(w, x)) return false;
    }
    return true;
  };
}

function compileMap(f: DescField & { fieldKind: 'map' }, present: Present): Write | null {
  if (f.mapKey !== ScalarType.STRING) return null;
  // The value of a map entry is field 2, written even when it is a zero value.
  const value =
    f.mapKind === 'message'
      ? messageWriter(2, f.message)
      : f.mapKind === 'scalar'
        ? scalarWriter(2, f.scalar)
        : null;
  if (value === null) return null;
  const no = f.number;
  return (w, json) => {
    const v = present(json);
    if (v === BAIL) return false;
    if (v === undefined) return true;
    if (!isObject(v)) return false;
    for (const k of Object.keys(v)) {
      const x = v[k]!;
      if (x === null) return false;
      w.tag(no, WireType.LengthDelimited).fork();
      w.tag(1, WireType.LengthDelimited).string(k);
      const ok = value(w, x);
      w.join();
      if (!ok) return false;
    }
    return true;
  };
}

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;
const UINT32_MAX = 0xffffffff;

function scalarWriter(no: number, type: ScalarType): WriteValue | null {
  switch (type) {
    case ScalarType.STRING:
      return (w, v) =>
        typeof v === 'string' && (w.tag(no, WireType.LengthDelimited).string(v), true);
    case ScalarType.BOOL:
      return (w, v) => typeof v === 'boolean' && (w.tag(no, WireType.Varint).bool(v), true);
    case ScalarType.INT32:
      return (w, v) =>
        Number.isInteger(v) &&
        (v as number) >= INT32_MIN &&
        (v as number) <= INT32_MAX &&
        (w.tag(no, WireType.Varint).int32(v as number), true);
    case ScalarType.UINT32:
      return (w, v) =>
        Number.isInteger(v) &&
        (v as number) >= 0 &&
        (v as number) <= UINT32_MAX &&
        (w.tag(no, WireType.Varint).uint32(v as number), true);
    case ScalarType.INT64:
      return (w, v) => {
        const n = int64Of(v);
        return n !== undefined && (w.tag(no, WireType.Varint).int64(n), true);
      };
    case ScalarType.UINT64:
      return (w, v) => {
        const n = int64Of(v);
        return n !== undefined && n >= 0 && (w.tag(no, WireType.Varint).uint64(n), true);
      };
    default:
      return null;
  }
}

function messageWriter(no: number, desc: DescMessage): WriteValue | null {
  if (desc.typeName === 'google.protobuf.Timestamp')
    return (w, v) => typeof v === 'string' && writeTimestamp(w, no, v);
  const write = writerOf(desc);
  if (write === undefined) return null;
  return (w, v) => {
    if (!isObject(v)) return false;
    w.tag(no, WireType.LengthDelimited).fork();
    const ok = write(w, v);
    w.join();
    return ok;
  };
}

/** RFC 3339 in UTC, as `Date#toISOString` writes it (fromJson takes offsets too). */
const UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d{1,9}))?Z$/;
/** The range fromJson accepts: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. */
const MS_MIN = -62135596800000;
const MS_MAX = 253402300799000;

/** A Timestamp message: seconds (1) and nanos (2), each only when not zero. */
function writeTimestamp(w: BinaryWriter, no: number, s: string): boolean {
  const m = UTC.exec(s);
  if (m === null) return false;
  const frac = m[1];
  // Whole seconds, as fromJson reads them; the fraction becomes nanos. With no fraction or
  // toISOString's three digits, Date.parse reads the string as it is (floor drops the
  // milliseconds); other fractions are cut off first, as fromJson does.
  const parsed = Date.parse(frac === undefined || frac.length === 3 ? s : `${s.slice(0, 19)}Z`);
  const ms = Math.floor(parsed / 1000) * 1000;
  if (Number.isNaN(ms) || ms < MS_MIN || ms > MS_MAX) return false;
  const seconds = ms / 1000;
  const nanos = frac === undefined ? 0 : Number(frac.padEnd(9, '0'));
  w.tag(no, WireType.LengthDelimited).fork();
  // A non-negative int64 below 2^32 has the same varint as that uint32, without the
  // 64-bit split int64() makes.
  if (seconds > 0 && seconds <= UINT32_MAX) w.tag(1, WireType.Varint).uint32(seconds);
  else if (seconds !== 0) w.tag(1, WireType.Varint).int64(seconds);
  if (nanos !== 0) w.tag(2, WireType.Varint).int32(nanos);
  w.join();
  return true;
}
