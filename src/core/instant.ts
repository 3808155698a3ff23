/**
 * Instants: the one reading of every time the service takes as input, and the one range
 * every stored or shown instant keeps to.
 *
 * Why a range: RFC 3339 writes a year in four digits and google.protobuf.Timestamp holds
 * 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z. An instant outside that (a year
 * 0, a year 10000) cannot be written on either door: JavaScript prints `+010000-…`, the
 * gRPC door's conversion throws. So nothing outside is taken, the database's CHECKs
 * (migration 0025) refuse it as a net, and anything stored before is shown clamped.
 */

/** 0001-01-01T00:00:00.000Z in epoch milliseconds. */
export const INSTANT_MIN_MS = -62_135_596_800_000;
/** 9999-12-31T23:59:59.999Z in epoch milliseconds: the last instant a Date can show in range. */
export const INSTANT_MAX_MS = 253_402_300_799_999;

/** What every time field says when its value is not an instant in the range. */
export const INSTANT_RANGE_PROBLEM =
  'must be an RFC 3339 time between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z';

// RFC 3339's date-time (section 5.6): `T`/`Z` in either case, a fraction of 1-9 digits (what
// a Timestamp's nanos hold), an offset `Z` or `±HH:MM`. Leap seconds (`:60`) are not taken:
// Timestamp has none (it is smeared time) and Date cannot hold one.
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Days of `month` (1-12) in `year`, by the proleptic Gregorian calendar. */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * `text` as epoch milliseconds (a fraction past milliseconds is cut off, as every stored
 * time is kept to the millisecond), or undefined when it is not an RFC 3339 date-time
 * naming an instant in [{@link INSTANT_MIN_MS}, {@link INSTANT_MAX_MS}]. Never throws.
 */
export function instantMsOf(text: unknown): number | undefined {
  if (typeof text !== 'string' || text.length > 64) return undefined;
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const offH = m[9] === undefined ? 0 : Number(m[9]);
  const offM = m[10] === undefined ? 0 : Number(m[10]);
  if (offH > 23 || offM > 59) return undefined;
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear takes the year as it is.
  const d = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  d.setUTCFullYear(year);
  const east = (m[8] === '-' ? -1 : 1) * (offH * 60 + offM) * 60_000;
  const t = d.getTime() - east;
  return t >= INSTANT_MIN_MS && t <= INSTANT_MAX_MS ? t : undefined;
}

/** `text` as a Date, or undefined where {@link instantMsOf} answers undefined. */
export function parseInstant(text: unknown): Date | undefined {
  const t = instantMsOf(text);
  return t === undefined ? undefined : new Date(t);
}

/**
 * Epoch milliseconds kept inside the range: below it the first instant, above it the last.
 * What is no number at all (an Invalid Date, which a stored `-infinity` or BC year may read
 * as) is taken as the first instant: a time that cannot be told is shown as long past.
 */
export function clampInstantMs(ms: number): number {
  if (Number.isNaN(ms)) return INSTANT_MIN_MS;
  return Math.min(INSTANT_MAX_MS, Math.max(INSTANT_MIN_MS, ms));
}

const DAY_MS = 86_400_000;
/** Character codes: `0`, `-`, `T`, `:`, `.`, `Z`. */
const ZERO = 48;
const DASH = 45;
const T = 84;
const COLON = 58;
const DOT = 46;
const Z = 90;

/**
 * The day last written, and its `YYYY-MM-DD` as character codes: a list's rows are mostly
 * of a few days.
 */
let lastDay = Number.NaN;
let y1 = ZERO;
let y2 = ZERO;
let y3 = ZERO;
let y4 = ZERO;
let m1 = ZERO;
let m2 = ZERO;
let d1 = ZERO;
let d2 = ZERO;

/**
 * Keep the date of a day counted from 1970-01-01 (negative before), by the proleptic
 * Gregorian calendar: Howard Hinnant's `civil_from_days`, in whole numbers throughout.
 */
function setDay(day: number): void {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1_460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  lastDay = day;
  y1 = ZERO + Math.floor(y / 1_000);
  y2 = ZERO + (Math.floor(y / 100) % 10);
  y3 = ZERO + (Math.floor(y / 10) % 10);
  y4 = ZERO + (y % 10);
  m1 = ZERO + Math.floor(m / 10);
  m2 = ZERO + (m % 10);
  d1 = ZERO + Math.floor(d / 10);
  d2 = ZERO + (d % 10);
}

/**
 * Epoch milliseconds inside the range as `Date#toISOString` writes them. Why not that: it
 * is a call into V8's runtime, about 0.45 µs, and a list page of 50 rows writes 100 of
 * them (a tenth of the page's CPU). Why one `String.fromCharCode`: it makes the one flat
 * string of 24 characters, where joining the fields made a tree of joined strings first,
 * some 340 bytes of garbage a call, 34 KB of a 50-row page's 185 (BENCHMARKS.md,
 * 2026-11-30). Equal to toISOString for every instant in the range
 * (test/unit/instant.test.ts holds it to that).
 */
function rangeText(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) setDay(day);
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const min = Math.floor(rest / 60_000);
  rest -= min * 60_000;
  const sec = Math.floor(rest / 1_000);
  const milli = rest - sec * 1_000;
  return String.fromCharCode(
    y1,
    y2,
    y3,
    y4,
    DASH,
    m1,
    m2,
    DASH,
    d1,
    d2,
    T,
    ZERO + Math.floor(h / 10),
    ZERO + (h % 10),
    COLON,
    ZERO + Math.floor(min / 10),
    ZERO + (min % 10),
    COLON,
    ZERO + Math.floor(sec / 10),
    ZERO + (sec % 10),
    DOT,
    ZERO + Math.floor(milli / 100),
    ZERO + (Math.floor(milli / 10) % 10),
    ZERO + (milli % 10),
    Z,
  );
}

/**
 * A stored time as RFC 3339 UTC with milliseconds (`Date#toISOString`'s form), clamped into
 * the range so that its year always has four digits. Takes what a driver may hand back for
 * a timestamp outside a Date's reach: a number (`Infinity`) or an Invalid Date. Never throws.
 */
export function instantText(d: Date | number): string {
  const ms = typeof d === 'number' ? d : d instanceof Date ? d.getTime() : Number.NaN;
  // Whole milliseconds in the range, as every Date holds (a number may have a fraction).
  if (ms >= INSTANT_MIN_MS && ms <= INSTANT_MAX_MS && Number.isInteger(ms)) return rangeText(ms);
  return new Date(clampInstantMs(ms)).toISOString();
}
