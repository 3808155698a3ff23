/**
 * Time windows as a person reads them in a table: "starts in 2h", "expires in 3d". The CLI's
 * one formatter for them (the console has its own, in the browser's words and time zone).
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// The mean Gregorian year, so that a far future instant (9999) is its own year count.
const YEAR = 365.2425 * DAY;

/**
 * `ms` (its size: the sign is the caller's) in the largest unit that reads well, rounded to
 * a whole one, spelled as the duration flags take it: `45s`, `12m`, `2h`, `3d`, `2y`. A unit
 * is used from one and a half of it up, so `--from 2h` read a second later is still `2h`,
 * not `119m`, and 100 minutes is `2h`, not `1h`.
 */
export function span(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1.5 * MINUTE) return `${Math.round(a / SECOND)}s`;
  if (a < 1.5 * HOUR) return `${Math.round(a / MINUTE)}m`;
  if (a < 1.5 * DAY) return `${Math.round(a / HOUR)}h`;
  if (a < 2 * YEAR) return `${Math.round(a / DAY)}d`;
  return `${Math.round(a / YEAR)}y`;
}

/** An instant relative to `now`: `in 2h`, or `5m ago` once it has passed. */
export function relative(at: number, now: number): string {
  return at > now ? `in ${span(at - now)}` : `${span(now - at)} ago`;
}

/** A window's ends as the API gives them (RFC 3339), either or both absent. */
export interface Window {
  notBefore?: unknown;
  expireTime?: unknown;
}

const instant = (v: unknown): number | undefined => {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
};

/**
 * Where `w` stands at `now`, in words: `starts in 2h, for 8h` (scheduled, with its length
 * when it ends), `starts in 2h`, `expires in 3d`, `expired 5m ago`; empty for a window with
 * no end that has started (it grants, and will), or none at all. A start in the past says
 * nothing: the binding grants.
 */
export function windowText(w: Window, now = Date.now()): string {
  const start = instant(w.notBefore);
  const end = instant(w.expireTime);
  if (start !== undefined && start > now)
    return `starts ${relative(start, now)}${end === undefined ? '' : `, for ${span(end - start)}`}`;
  if (end === undefined) return '';
  return end > now ? `expires ${relative(end, now)}` : `expired ${relative(end, now)}`;
}
