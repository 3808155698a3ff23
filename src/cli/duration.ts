import { CliError, EXIT } from './cli-errors.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * `90s`, `15m`, `2h`, `7d`, or a sum of them (`1h30m`) in milliseconds.
 * @throws CliError (usage) naming `flag` for anything else.
 */
export function parseDuration(text: string, flag: string): number {
  if (!/^(\d+[smhd])+$/.test(text))
    throw new CliError(
      `${flag} takes a duration like 90s, 15m, 2h or 7d (or 1h30m), not "${text}"`,
      EXIT.USAGE,
    );
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms;
}

/**
 * A point in time: an RFC 3339 timestamp as given, or a duration ago (`2h` → two hours before
 * now), as an RFC 3339 timestamp. @throws CliError (usage) naming `flag`.
 */
export function parseTimeOrAgo(text: string, flag: string, now = Date.now()): string {
  if (/^\d{4}-\d\d-\d\dT/.test(text) && !Number.isNaN(Date.parse(text))) return text;
  if (/^\d/.test(text) && !/^\d{4}-/.test(text))
    return new Date(now - parseDuration(text, flag)).toISOString();
  throw new CliError(
    `${flag} takes a time (2026-01-31T12:00:00Z) or a duration ago (2h, 7d), not "${text}"`,
    EXIT.USAGE,
  );
}

/** A duration in seconds as people say it: 90m, 8h, 7d (the inverse of parseDuration's units). */
export function durationText(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}
