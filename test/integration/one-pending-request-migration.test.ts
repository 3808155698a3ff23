import test from 'ava';
import { migrateLatest } from '../../src/db/migrate.js';
import * as onePending from '../../src/db/migrations/0026-one-pending-request.js';
import { freshDatabase } from '../helpers/db.js';

/**
 * Migration 0026 on a deployment that already holds identical pending requests (before it,
 * one viewer could file hundreds): it keeps the oldest of each (requester, role, group),
 * closes the rest as CANCELLED saying which it duplicates, leaves closed requests and other
 * asks alone, and from then on the database refuses a second pending one itself.
 */
const ORG = 'b'.repeat(40);
const ROLE = 'c'.repeat(40);
const OTHER_ROLE = 'd'.repeat(40);
const ASKER = `${ORG}/${'1'.repeat(16)}`;

test('0026 closes duplicate pending requests, keeping the oldest, then refuses them', async (t) => {
  const db = await freshDatabase();
  const k = db.knex;
  try {
    await migrateLatest(k);
    await onePending.down(k);
    await k.raw(`INSERT INTO groups (uid, name) VALUES (?, 'org')`, [ORG]);
    const request = (n: number, role: string, state: string, ageSeconds: number) =>
      k.raw(
        `INSERT INTO access_requests (uid, parent_uid, requester_uid, role_uid, reason,
           duration_seconds, state, approvals_required, timeout_time, created_at)
         VALUES (?, ?, ?, ?, 'r', 60, ?, 1, now() + interval '1 day',
                 now() - make_interval(secs => ?))`,
        [`${ORG}/${String(n).repeat(16)}`, ORG, ASKER, role, state, ageSeconds],
      );
    await request(2, ROLE, 'PENDING', 30); // the oldest pending: kept
    await request(3, ROLE, 'PENDING', 20);
    await request(4, ROLE, 'PENDING', 10);
    await request(5, ROLE, 'DENIED', 40); // closed: untouched
    await request(6, OTHER_ROLE, 'PENDING', 5); // another ask: untouched

    await onePending.up(k);

    const rows = (await k('access_requests')
      .orderBy('uid')
      .select('uid', 'state', 'closed_by', 'close_reason')) as Array<{
      uid: string;
      state: string;
      closed_by: string | null;
      close_reason: string | null;
    }>;
    const kept = `${ORG}/${'2'.repeat(16)}`;
    t.deepEqual(
      rows.map((r) => [r.uid.slice(-1), r.state, r.closed_by]),
      [
        ['2', 'PENDING', null],
        ['3', 'CANCELLED', 'system:one-pending-request'],
        ['4', 'CANCELLED', 'system:one-pending-request'],
        ['5', 'DENIED', null],
        ['6', 'PENDING', null],
      ],
    );
    t.true(rows[1]!.close_reason!.includes(kept), 'the close names the request kept');
    // The database refuses a second pending request for the same role and group.
    const err = await t.throwsAsync(request(7, ROLE, 'PENDING', 0));
    t.is((err as { code?: string }).code, '23505');
    // down → up again on the cleaned table.
    await onePending.down(k);
    await onePending.up(k);
    t.pass();
  } finally {
    await db.close();
  }
});
