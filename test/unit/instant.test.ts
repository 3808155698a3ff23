import test from 'ava';
import fc from 'fast-check';
import {
  INSTANT_MAX_MS,
  INSTANT_MIN_MS,
  instantMsOf,
  instantText,
} from '../../src/core/instant.js';
import { RoleBindingSchema } from '../../src/gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { messageOfJson, writeDirectly } from '../../src/grpc/proto-json.js';
import { ts, tsOpt } from '../../src/wire/time.js';
import { EXTREME_INSTANTS } from '../helpers/fuzz-instants.js';

test('instantMsOf: the ends of the range, and nothing past them', (t) => {
  t.is(instantMsOf('0001-01-01T00:00:00Z'), INSTANT_MIN_MS);
  t.is(instantMsOf('9999-12-31T23:59:59.999999999Z'), INSTANT_MAX_MS);
  t.is(instantMsOf('0001-01-01T01:00:00+01:00'), INSTANT_MIN_MS);
  t.is(instantMsOf('9999-12-31T22:59:59.999-01:00'), INSTANT_MAX_MS);
  for (const s of [
    '0000-12-31T23:59:59.999Z',
    '0001-01-01T00:30:00+01:00',
    '9999-12-31T23:30:00-01:00',
    '10000-01-01T00:00:00Z',
    '+010000-01-01T00:00:00.000Z',
    '-000001-01-01T00:00:00.000Z',
  ])
    t.is(instantMsOf(s), undefined, s);
});

test('instantMsOf: RFC 3339 date-times only, read as Date.parse reads the plain ones', (t) => {
  for (const s of [
    '2026-01-31T12:00:00Z',
    '2026-01-31T12:00:00.123Z',
    '2026-01-31T12:00:00.5+05:30',
    '2028-02-29T00:00:00-00:00',
    '0099-06-01T00:00:00Z',
  ])
    t.is(instantMsOf(s), Date.parse(s), s);
  // Past the millisecond, cut off (as every stored time is kept).
  t.is(instantMsOf('2026-01-31T12:00:00.123999999Z'), Date.parse('2026-01-31T12:00:00.123Z'));
  t.is(instantMsOf('2026-01-31t12:00:00z'), Date.parse('2026-01-31T12:00:00Z'));
  for (const s of [
    '2016-12-31T23:59:60Z',
    '2026-01-01T00:00:00.1234567891Z',
    '2026-01-01T00:00:00+24:00',
    '2026-01-01T00:00:00+23:60',
    '2026-01-01T00:00:00+0100',
    '2026-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01 00:00:00Z',
    '2026-01-01',
    'infinity',
    '',
  ])
    t.is(instantMsOf(s), undefined, s);
  t.is(instantMsOf(42), undefined);
});

test('instantText: any stored value is RFC 3339 with a four-digit year, and never throws', (t) => {
  t.is(instantText(new Date(Date.UTC(2026, 0, 31))), '2026-01-31T00:00:00.000Z');
  t.is(instantText(new Date(8.64e15)), '9999-12-31T23:59:59.999Z');
  t.is(instantText(new Date(-8.64e15)), '0001-01-01T00:00:00.000Z');
  t.is(instantText(new Date(Number.NaN)), '0001-01-01T00:00:00.000Z');
  t.is(instantText(Number.POSITIVE_INFINITY), '9999-12-31T23:59:59.999Z');
  t.is(instantText(Number.NEGATIVE_INFINITY), '0001-01-01T00:00:00.000Z');
  t.is(ts(new Date('+010000-01-01T00:00:00Z')), '9999-12-31T23:59:59.999Z');
  t.is(tsOpt(new Date('0000-06-01T00:00:00Z')), '0001-01-01T00:00:00.000Z');
});

test('instantText: writes every instant of the range as Date#toISOString does', (t) => {
  // Its own formatter (not toISOString): held to it across the whole range, at the ends of
  // days, months, leap days and centuries, before 1970 and on days other than the last one.
  const edges = [
    INSTANT_MIN_MS,
    INSTANT_MAX_MS,
    -1,
    0,
    1,
    Date.UTC(2000, 1, 29, 23, 59, 59, 999),
    Date.UTC(1900, 1, 28, 23, 59, 59, 999),
    Date.UTC(1900, 2, 1),
    Date.UTC(2100, 1, 28, 12),
    Date.UTC(1600, 1, 29),
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
  ];
  for (const ms of edges) t.is(instantText(new Date(ms)), new Date(ms).toISOString(), String(ms));
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: INSTANT_MIN_MS, max: INSTANT_MAX_MS }), { minLength: 1 }),
      fc.integer({ min: 0, max: 3 * 86_400_000 }),
      (instants, near) =>
        // Each instant, then one within a few days of it: the day kept from the last call
        // is used only for its own day.
        instants.every(
          (ms) =>
            instantText(new Date(ms)) === new Date(ms).toISOString() &&
            instantText(Math.max(INSTANT_MIN_MS, ms - near)) ===
              new Date(Math.max(INSTANT_MIN_MS, ms - near)).toISOString(),
        ),
    ),
    { numRuns: 2_000 },
  );
  // A number with a fraction of a millisecond is shown as its Date would be.
  t.is(instantText(1.5), new Date(1.5).toISOString());
  t.is(instantText(-0.5), new Date(-0.5).toISOString());
});

test('gRPC: a stored binding with extreme instants converts on both encoders', (t) => {
  for (const ms of [-8.64e15, -62167219200000, 253402300800000, 8.64e15, Number.NaN]) {
    const json = {
      uid: 'a'.repeat(40),
      notBefore: ts(new Date(ms)),
      expireTime: ts(new Date(ms)),
      createTime: ts(new Date(ms)),
    };
    t.notThrows(() => messageOfJson(RoleBindingSchema, json), String(ms));
    t.not(writeDirectly(RoleBindingSchema, json), undefined, String(ms));
  }
});

test('every extreme instant the fuzzers send is refused or lies inside the range', (t) => {
  for (const s of EXTREME_INSTANTS) {
    const ms = instantMsOf(s);
    if (ms !== undefined) t.true(ms >= INSTANT_MIN_MS && ms <= INSTANT_MAX_MS, s);
  }
  t.pass();
});
