import type { Knex } from 'knex';

/**
 * Every timestamp column fed from input keeps to 0001-01-01T00:00:00Z …
 * 9999-12-31T23:59:59.999Z, what RFC 3339 and google.protobuf.Timestamp can carry (see
 * src/core/instant.ts). The input schemas refuse anything else first; these CHECKs are the
 * net under them, the same on PostgreSQL and PGlite. A request's start also leaves room for
 * its duration, so that its approval can never compute an expiry past the range.
 *
 * Rows stored out of range by an earlier release (PostgreSQL took a year 0 and a year
 * 10000; `infinity` by hand) are brought into it first, explicitly, so that this migration
 * never fails on them. None of these changes what a row means today:
 * - a binding's `expire_time` is clamped into [first instant + 1 ms, last instant] (one
 *   that ended before year 1 has still ended; one that ends after 9999 still lasts), and
 *   its `not_before` into [first instant, last instant − 1 ms] (started; not yet started),
 *   which keeps `not_before < expire_time` wherever it held;
 * - a pending access request whose start plus duration lies past the range is closed as
 *   EXPIRED (its approval could not make its binding); every request's `not_before` is then
 *   clamped so that start plus duration fits, and `timeout_time` clamped;
 * - an invite's `expires_at` and an advisory's OSV times (`created_at` = published,
 *   `updated_at` = modified, `withdrawn_at`) are clamped.
 * No audit record or event is written for these repairs (a migration acts for nobody).
 *
 * down() drops the checks; the repaired values stay (they are valid either way).
 */
const MIN = `'0001-01-01T00:00:00Z'::timestamptz`;
const MAX = `'9999-12-31T23:59:59.999Z'::timestamptz`;
const MS = `interval '1 millisecond'`;
const DURATION = `duration_seconds * interval '1 second'`;

/** `col` clamped into [lo, hi]; NULL stays NULL (GREATEST alone would make it `lo`). */
const clamp = (col: string, lo: string, hi: string) =>
  `CASE WHEN ${col} IS NULL THEN NULL ELSE LEAST(GREATEST(${col}, ${lo}), ${hi}) END`;
const inRange = (col: string) => `${col} BETWEEN ${MIN} AND ${MAX}`;

/** [table, column] of every plain range check, named `<table>_<column>_in_range`. */
const RANGED: ReadonlyArray<readonly [string, string]> = [
  ['role_bindings', 'expire_time'],
  ['role_bindings', 'not_before'],
  ['access_requests', 'timeout_time'],
  ['group_invites', 'expires_at'],
  ['advisories', 'created_at'],
  ['advisories', 'updated_at'],
  ['advisories', 'withdrawn_at'],
];
const REQUEST_START = 'access_requests_not_before_in_range';

export async function up(knex: Knex): Promise<void> {
  const outside = (col: string) => `NOT (${inRange(col)})`;
  await knex.raw(`
    UPDATE role_bindings SET
      expire_time = ${clamp('expire_time', `${MIN} + ${MS}`, MAX)},
      not_before = ${clamp('not_before', MIN, `${MAX} - ${MS}`)}
    WHERE ${outside('expire_time')} OR ${outside('not_before')};
    UPDATE access_requests SET state = 'EXPIRED', updated_at = now()
    WHERE state = 'PENDING' AND NOT (not_before <= ${MAX} - ${DURATION});
    UPDATE access_requests SET
      not_before = ${clamp('not_before', MIN, `${MAX} - ${DURATION}`)}
    WHERE NOT (not_before >= ${MIN} AND not_before <= ${MAX} - ${DURATION});
    UPDATE access_requests SET timeout_time = ${clamp('timeout_time', MIN, MAX)}
    WHERE ${outside('timeout_time')};
    UPDATE group_invites SET expires_at = ${clamp('expires_at', MIN, MAX)}
    WHERE ${outside('expires_at')};
    UPDATE advisories SET
      created_at = ${clamp('created_at', MIN, MAX)},
      updated_at = ${clamp('updated_at', MIN, MAX)},
      withdrawn_at = ${clamp('withdrawn_at', MIN, MAX)}
    WHERE ${outside('created_at')} OR ${outside('updated_at')} OR ${outside('withdrawn_at')};
  `);
  const checks = RANGED.map(
    ([table, col]) =>
      `ALTER TABLE ${table} ADD CONSTRAINT ${table}_${col}_in_range CHECK (${inRange(col)});`,
  );
  await knex.raw(`
    ${checks.join('\n    ')}
    ALTER TABLE access_requests ADD CONSTRAINT ${REQUEST_START}
      CHECK (not_before >= ${MIN} AND not_before <= ${MAX} - ${DURATION});
  `);
}

export async function down(knex: Knex): Promise<void> {
  const drops = RANGED.map(
    ([table, col]) => `ALTER TABLE ${table} DROP CONSTRAINT ${table}_${col}_in_range;`,
  );
  await knex.raw(`
    ${drops.join('\n    ')}
    ALTER TABLE access_requests DROP CONSTRAINT ${REQUEST_START};
  `);
}
