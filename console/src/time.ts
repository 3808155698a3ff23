/**
 * Every instant the console shows, in the person's own time zone and words: one formatter
 * for the local time ("29/11/2026, 14:05"), one for how far off it is ("in 2 hours"), and
 * a binding's window in words ("starts in 2 hours"). The API speaks UTC (RFC 3339); nothing
 * here prints it raw.
 */

// Mean Gregorian years and months, so that a far future instant (9999) is its own year count.
const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365.2425 * 86_400],
  ['month', (365.2425 / 12) * 86_400],
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

const parse = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
};

/**
 * "5 minutes ago", "in 2 hours", "yesterday": the largest unit it is at least one of,
 * rounded (so a start two hours off, read a second later, is still "in 2 hours").
 */
export function ago(iso: string, now = Date.now()): string {
  const s = ((parse(iso) ?? now) - now) / 1000;
  for (const [unit, size] of UNITS)
    if (Math.abs(s) >= size || unit === 'second')
      return relative.format(Math.round(s / size), unit);
  return '';
}

/** The instant as a date and time in the browser's time zone and locale; '' for none. */
export function localTime(iso: string | undefined): string {
  const ms = parse(iso);
  return ms === undefined ? '' : new Date(ms).toLocaleString();
}

/** The day of the instant in the browser's time zone and locale; '' for none. */
export function localDate(iso: string | undefined): string {
  const ms = parse(iso);
  return ms === undefined ? '' : new Date(ms).toLocaleDateString();
}

/**
 * Where a binding's window stands at `now`: "starts in 2 hours" while scheduled, "expires in
 * 3 days" once started with an end, "expired 5 minutes ago", else "never expires". What a
 * table shows, so that a binding that has not started never looks live.
 */
export function windowText(
  w: { notBefore?: string; expireTime?: string },
  now = Date.now(),
): string {
  const start = parse(w.notBefore);
  const end = parse(w.expireTime);
  if (start !== undefined && start > now) return `starts ${ago(w.notBefore!, now)}`;
  if (end === undefined) return 'never expires';
  return end > now ? `expires ${ago(w.expireTime!, now)}` : `expired ${ago(w.expireTime!, now)}`;
}

/** The window's ends in local time, for a title or a review: "from … until …". */
export function windowSpan(w: { notBefore?: string; expireTime?: string }): string {
  const parts = [
    w.notBefore ? `from ${localTime(w.notBefore)}` : '',
    w.expireTime ? `until ${localTime(w.expireTime)}` : '',
  ];
  return parts.filter((p) => p !== '').join(' ');
}

/**
 * A `datetime-local` input's value (the person's wall clock, no zone) as an RFC 3339
 * instant; undefined for an empty or unreadable one.
 */
export function fromLocalInput(value: string): string | undefined {
  if (value === '') return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
