import test from 'ava';
import fc from 'fast-check';
import pg from 'pg';
import { clampInstantMs } from '../../src/core/instant.js';
import { makeTimestamptzParser } from '../../src/db/timestamptz-parser.js';

const pgParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (s: string) => unknown;
const fallbacks: string[] = [];
const parse = makeTimestamptzParser((s) => {
  fallbacks.push(s);
  return pgParser(s);
});

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** How PostgreSQL prints `instant` (DateStyle ISO) in a session whose zone is `offset` seconds east. */
function pgText(instant: number, micros: number, offset: number): string {
  const local = new Date(instant + offset * 1000);
  const frac = local.getUTCMilliseconds() * 1000 + micros;
  const sign = offset < 0 ? '-' : '+';
  const a = Math.abs(offset);
  const zone =
    pad(Math.floor(a / 3600)) +
    (a % 3600 === 0 ? '' : `:${pad(Math.floor((a % 3600) / 60))}`) +
    (a % 60 === 0 ? '' : `:${pad(a % 60)}`);
  const fraction = frac === 0 ? '' : `.${pad(frac, 6)}`.replace(/0+$/, '');
  return (
    `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())} ` +
    `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
    `${fraction}${sign}${zone}`
  );
}

test('timestamptz: reads the ISO shape exactly, to the millisecond, in any offset', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9998, 11, 31) }),
      fc.integer({ min: 0, max: 999 }),
      fc.integer({ min: -15 * 3600, max: 15 * 3600 }),
      (instant, micros, offset) => {
        const text = pgText(instant, micros, offset);
        const d = parse(text) as Date;
        return d instanceof Date && d.getTime() === instant;
      },
    ),
    { numRuns: 5_000 },
  );
  t.deepEqual(fallbacks, [], 'the fast path read every one of them');
});

test('timestamptz: agrees with pg’s own parser on the shapes PostgreSQL prints', (t) => {
  for (const s of [
    '2026-11-25 04:28:04.123456+00',
    '2026-11-25 04:28:04+00',
    '2026-11-25 04:28:04.1+05:30',
    '1970-01-01 00:00:00-03:30:45',
    '2024-02-29 23:59:59.999999-12',
  ]) {
    t.is((parse(s) as Date).getTime(), (pgParser(s) as Date).getTime(), s);
  }
});

test('timestamptz: leaves BC, far-future, infinite and odd text to pg’s parser, infinities as the range’s ends', (t) => {
  fallbacks.length = 0;
  const odd = [
    'infinity',
    '-infinity',
    '0044-03-15 12:00:00+00 BC',
    '12026-01-01 00:00:00+00',
    '0099-01-01 00:00:00+00',
    '2026-11-25 04:28:04.+00',
    '2026-11-25T04:28:04+00',
    '2026-11-25 04:28:04+0',
    '2026-11-25 04:28:04Z',
  ];
  for (const s of odd) {
    const ours = parse(s);
    const theirs = pgParser(s);
    // pg's parser reads the infinities as numbers; the stores take a Date, so they are read
    // as the last and first instants the service shows.
    const expected = typeof theirs === 'number' ? new Date(clampInstantMs(theirs)) : theirs;
    t.is(
      ours instanceof Date ? ours.getTime() : ours,
      expected instanceof Date ? expected.getTime() : expected,
      s,
    );
  }
  t.deepEqual(fallbacks, odd);
});
