import test from 'ava';
import { INSTANT_RANGE_PROBLEM } from '../../src/core/instant.js';
import { translateDbError } from '../../src/db/errors.js';
import { migrateLatest } from '../../src/db/migrate.js';
import * as bounds from '../../src/db/migrations/0025-instant-bounds.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { freshDatabase } from '../helpers/db.js';

/**
 * Migration 0025 on a deployment that already stored instants out of range (PostgreSQL
 * took a year 0 and a year 10000 before the inputs were bounded; `infinity` by hand): it
 * does not fail, it brings each row into 0001-01-01 … 9999-12-31 without changing what the
 * row means, and from then on the database refuses such instants itself.
 */
const ORG = 'a'.repeat(40);
const MAX = '9999-12-31T23:59:59.999Z';
const MIN = '0001-01-01T00:00:00.000Z';

test('0025 clamps stored instants out of range, expires unapprovable requests, then refuses them', async (t) => {
  const db = await freshDatabase();
  const k = db.knex;
  try {
    await migrateLatest(k);
    // As before 0025: the checks are not there.
    await bounds.down(k);
    const viewer = builtinRoleUid('viewer');
    await k.raw(`INSERT INTO groups (uid, name) VALUES (?, 'org')`, [ORG]);
    const ids = ['1', '2', '3', '4'].map((n) => `${ORG}/${n.repeat(16)}`);
    for (const uid of ids) {
      await k.raw(
        `INSERT INTO identities (uid, parent_uid, name, claim_match) VALUES (?, ?, ?, '{}')`,
        [uid, ORG, `id${uid.slice(-1)}`],
      );
    }
    const binding = (n: number, notBefore: string | null, expire: string | null) =>
      k.raw(
        `INSERT INTO role_bindings (uid, parent_uid, identity_uid, role_uid, not_before, expire_time)
         VALUES (?, ?, ?, ?, ?::timestamptz, ?::timestamptz)`,
        [`${ORG}/b${String(n).repeat(15)}`, ORG, ids[n - 1]!, viewer, notBefore, expire],
      );
    await binding(1, '0001-01-01 BC', '10000-01-01T00:00:00Z');
    await binding(2, '10000-01-01T00:00:00Z', '10001-01-01T00:00:00Z');
    await binding(3, null, '-infinity');
    await binding(4, '-infinity', null);
    const request = (n: number, state: string, notBefore: string) =>
      k.raw(
        `INSERT INTO access_requests (uid, parent_uid, requester_uid, role_uid, reason,
           duration_seconds, not_before, state, approvals_required, timeout_time)
         VALUES (?, ?, ?, ?, 'r', 7776000, ?::timestamptz, ?, 1, now() + interval '1 day')`,
        [`${ORG}/r${String(n).repeat(15)}`, ORG, ids[n - 1]!, viewer, notBefore, state],
      );
    await request(1, 'PENDING', '9999-12-31T00:00:00Z');
    await request(2, 'DENIED', '10000-06-01T00:00:00Z');
    await request(3, 'PENDING', '2026-06-01T00:00:00Z');

    await bounds.up(k);

    const rows = (await k.raw(
      `SELECT to_char(not_before AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') nb,
              to_char(expire_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') et
       FROM role_bindings ORDER BY uid`,
    )) as { rows: Array<{ nb: string | null; et: string | null }> };
    t.deepEqual(rows.rows, [
      // Started long ago, lasts past 9999: still so.
      { nb: MIN, et: MAX },
      // Never starts in range: still not started, and its window is not empty.
      { nb: '9999-12-31T23:59:59.998Z', et: MAX },
      // Ended long ago: still ended.
      { nb: null, et: '0001-01-01T00:00:00.001Z' },
      { nb: MIN, et: null },
    ]);
    const requests = (await k.raw(
      `SELECT state, to_char(not_before AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') nb
       FROM access_requests ORDER BY uid`,
    )) as { rows: Array<{ state: string; nb: string }> };
    t.deepEqual(requests.rows, [
      // Its approval would have made an expiry in year 10000: closed, and clamped to fit.
      { state: 'EXPIRED', nb: '9999-10-02T23:59:59.999Z' },
      { state: 'DENIED', nb: '9999-10-02T23:59:59.999Z' },
      { state: 'PENDING', nb: '2026-06-01T00:00:00.000Z' },
    ]);

    // From now on the database refuses them itself, whichever database it is.
    for (const [sql, args] of [
      [
        `UPDATE role_bindings SET expire_time = '10000-01-01T00:00:00Z' WHERE identity_uid = ?`,
        [ids[0]!],
      ],
      [`UPDATE role_bindings SET not_before = '0001-01-01 BC' WHERE identity_uid = ?`, [ids[0]!]],
      [
        `UPDATE access_requests SET not_before = '9999-12-01T00:00:00Z' WHERE requester_uid = ?`,
        [ids[2]!],
      ],
    ] as const) {
      const e = await t.throwsAsync(k.raw(sql, [...args]));
      t.regex(e.message, /in_range/);
      // Answered as the input schemas answer, should a validator ever let one through.
      const answered = translateDbError(e) as { code?: unknown; message?: unknown };
      t.is(answered.code, 3);
      t.is(answered.message, `Invalid argument: body: ${INSTANT_RANGE_PROBLEM}`);
    }
    await bounds.down(k);
    await bounds.up(k);
  } finally {
    await db.close();
  }
});
