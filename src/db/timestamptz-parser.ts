/**
 * A `timestamptz` parser for the shape PostgreSQL prints with `DateStyle = ISO`
 * (`2026-11-25 04:28:04.123456+00`, offsets like `+05:30` or `-03:30:45`), falling back to
 * pg's own parser (postgres-date) for anything else: BC years, years past 9999, infinity.
 *
 * Why: every list page parses two timestamps a row, and postgres-date's three regular
 * expressions a value were a tenth of a 50-row page's CPU in the benchmark's profile. This
 * reads fixed positions instead. Milliseconds are truncated, as postgres-date does and as
 * the wire's millisecond RFC 3339 needs.
 */
export function makeTimestamptzParser(fallback: (text: string) => unknown) {
  return (s: string): unknown => {
    const t = fastParse(s);
    return t === undefined ? fallback(s) : new Date(t);
  };
}

/** Digits at [from, to) as a number, or -1 if any of them is not a digit. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Epoch milliseconds, or undefined when the text is not the plain ISO shape. */
function fastParse(s: string): number | undefined {
  // YYYY-MM-DD HH:MM:SS is 19 characters; an offset needs at least 3 more.
  if (s.length < 22 || s[4] !== '-' || s[7] !== '-' || s[10] !== ' ' || s[13] !== ':')
    return undefined;
  if (s[16] !== ':') return undefined;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 7);
  const day = digits(s, 8, 10);
  const hour = digits(s, 11, 13);
  const minute = digits(s, 14, 16);
  const second = digits(s, 17, 19);
  // Years 0-99 would be read as 19xx by Date.UTC: leave them to the fallback.
  if (year < 100 || month < 1 || day < 1 || hour < 0 || minute < 0 || second < 0)
    return undefined;
  let i = 19;
  let ms = 0;
  if (s[i] === '.') {
    let scale = 100;
    i++;
    const start = i;
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
      ms += (s.charCodeAt(i) - 48) * scale;
      scale /= 10;
      i++;
    }
    if (i === start) return undefined;
    ms = Math.trunc(ms);
  }
  const sign = s[i] === '+' ? 1 : s[i] === '-' ? -1 : 0;
  if (sign === 0) return undefined;
  const rest = s.length - i - 1;
  // ±HH, ±HH:MM or ±HH:MM:SS and nothing after it (no " BC").
  if (rest !== 2 && rest !== 5 && rest !== 8) return undefined;
  const oh = digits(s, i + 1, i + 3);
  const om = rest >= 5 && s[i + 3] === ':' ? digits(s, i + 4, i + 6) : rest >= 5 ? -1 : 0;
  const os = rest === 8 && s[i + 6] === ':' ? digits(s, i + 7, i + 9) : rest === 8 ? -1 : 0;
  if (oh < 0 || om < 0 || os < 0) return undefined;
  const offsetMs = sign * ((oh * 60 + om) * 60 + os) * 1000;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs;
}
