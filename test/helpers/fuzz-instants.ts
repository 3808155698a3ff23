import fc from 'fast-check';

/**
 * Instants at and past the edges of what RFC 3339 and google.protobuf.Timestamp carry
 * (0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999999999Z), and spellings around them: a
 * year 0 and 10000, JavaScript's expanded years up to its ±275760, negative years, leap
 * seconds, ten fraction digits, offsets that push an edge over, and offsets out of range.
 */
export const EXTREME_INSTANTS = [
  '0000-01-01T00:00:00Z',
  '0000-12-31T23:59:59.999Z',
  '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00.000000001Z',
  '0001-01-01T00:30:00+01:00',
  '0001-01-01T00:00:00-00:01',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59.999999999Z',
  '9999-12-31T23:59:59-01:00',
  '9999-12-31T23:59:59.9999999999Z',
  '10000-01-01T00:00:00Z',
  '+010000-01-01T00:00:00.000Z',
  '+275760-09-13T00:00:00.000Z',
  '+275760-09-13T00:00:00.001Z',
  '-000001-01-01T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '2016-12-31T23:59:60Z',
  '1990-12-31T15:59:60-08:00',
  '2026-01-01T00:00:00.1234567891Z',
  '2026-01-01T00:00:00+24:00',
  '2026-01-01T00:00:00-23:59',
  '2026-01-01T00:00:00+23:60',
  '2026-01-01T00:00:00+0100',
  '2026-02-29T00:00:00Z',
  '2028-02-29T00:00:00Z',
  '2026-01-01t00:00:00z',
  '2026-01-01 00:00:00Z',
  '2026-01-01',
  'infinity',
  '-infinity',
  '0',
  '1e400',
];

/** An instant as text: an extreme one, or any Date JavaScript can write, in a year or two. */
export const instantTextArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EXTREME_INSTANTS) },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: -400, max: 800 })
      .map((days) => new Date(Date.now() + days * 86_400_000).toISOString()),
  },
);

/** Durations in seconds around every bound a request has (1 s … 90 days) and past them. */
export const durationSecondsArb = fc.oneof(
  fc.constantFrom(0, 1, -1, 7_776_000, 7_776_001, 2 ** 31, 2 ** 53 + 1, 1e308, 0.5),
  fc.integer({ min: 1, max: 7_776_000 }),
);

/** Seconds of the Timestamp's first instant and of the one after its last. */
const TS_MIN = -62_135_596_800n;
const TS_PAST_MAX = 253_402_300_800n;

/**
 * google.protobuf.Timestamp values as binary protobuf can carry them and JSON cannot: just
 * inside and outside the range, int64's ends, nanos negative or past a second; and sane ones.
 */
export const timestampArb = fc.record({
  seconds: fc.oneof(
    fc.constantFrom(
      TS_MIN - 1n,
      TS_MIN,
      TS_PAST_MAX - 1n,
      TS_PAST_MAX,
      -62_167_219_200n, // 0000-01-01
      8_210_298_412_800n, // +275760-09-13
      -(2n ** 63n),
      2n ** 63n - 1n,
      0n,
    ),
    fc.bigInt({ min: TS_MIN - 86_400n, max: TS_PAST_MAX + 86_400n }),
    {
      weight: 3,
      arbitrary: fc
        .integer({ min: -400, max: 800 })
        .map((days) => BigInt(Math.floor(Date.now() / 1000) + days * 86_400)),
    },
  ),
  nanos: fc.oneof(
    fc.constantFrom(0, 999_999_999, 1_000_000_000, -1, -999_999_999, 2 ** 31 - 1, -(2 ** 31)),
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 999_999_999 }) },
  ),
});
