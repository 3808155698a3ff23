import type { Knex } from 'knex';

/**
 * One pending access request per (requester, role, group) (docs/access-requests.md): a
 * second identical ask would only add rows, audit records, events and inbox lines, so the
 * database refuses it whatever the door or the race. The index is partial: a closed
 * request is history and does not stop asking again.
 *
 * Installations may hold such duplicates from before. The oldest pending one of each
 * (requester, role, group) stays; the later ones are closed as CANCELLED by
 * `system:one-pending-request`, naming the one kept, before the index is built (a
 * migration writes no audit record; the request rows keep who closed them and why).
 *
 * `audit_events_invites_created` serves the approval count's provenance walk
 * (access-request-store.ts): who created invites for a role at a group, without reading
 * every record of that group.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE access_requests AS r
       SET state = 'CANCELLED',
           closed_by = 'system:one-pending-request',
           close_reason = 'a duplicate of the pending request ' || k.uid,
           updated_at = now()
      FROM (
        SELECT uid, requester_uid, role_uid, parent_uid,
               row_number() OVER (PARTITION BY requester_uid, role_uid, parent_uid
                                  ORDER BY created_at, uid) AS n
          FROM access_requests
         WHERE state = 'PENDING'
      ) AS k
     WHERE k.n = 1
       AND r.state = 'PENDING'
       AND r.requester_uid = k.requester_uid
       AND r.role_uid = k.role_uid
       AND r.parent_uid = k.parent_uid
       AND r.uid <> k.uid;
    CREATE UNIQUE INDEX access_requests_one_pending
      ON access_requests (requester_uid, role_uid, parent_uid)
      WHERE state = 'PENDING';
    CREATE INDEX audit_events_invites_created
      ON audit_events (resource_parent_uid, (after->>'roleUid'))
      WHERE resource_type = 'iam.arbor.dev/GroupInvite' AND operation = 'create';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    `DROP INDEX audit_events_invites_created; DROP INDEX access_requests_one_pending;`,
  );
}
