import type { Knex } from 'knex';

/**
 * Access requests (docs/access-requests.md) and the per-group request policy.
 *
 * A request hangs under its group (`parent_uid`) and goes with it (ON DELETE CASCADE): a
 * closed request is history, which the audit trail keeps, and must not hold a group's
 * delete back. The requester and role are not foreign keys for the same reason; a final
 * approval that names a deleted identity or role fails on role_bindings' own keys.
 * The partial index serves the timeout sweep over pending requests only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE access_requests (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE CASCADE,
      requester_uid text COLLATE "C" NOT NULL,
      role_uid text COLLATE "C" NOT NULL,
      reason text NOT NULL,
      duration_seconds integer NOT NULL CHECK (duration_seconds > 0),
      not_before timestamptz(3),
      state text NOT NULL DEFAULT 'PENDING'
        CHECK (state IN ('PENDING', 'APPROVED', 'DENIED', 'CANCELLED', 'EXPIRED')),
      approvals_required integer NOT NULL CHECK (approvals_required > 0),
      approvals jsonb NOT NULL DEFAULT '[]',
      closed_by text,
      close_reason text,
      binding_uid text COLLATE "C",
      timeout_time timestamptz(3) NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX access_requests_parent_created ON access_requests (parent_uid, created_at, uid);
    CREATE INDEX access_requests_requester ON access_requests (requester_uid, created_at, uid);
    CREATE INDEX access_requests_created ON access_requests (created_at, uid);
    CREATE INDEX access_requests_pending ON access_requests (timeout_time, uid)
      WHERE state = 'PENDING';
    CREATE TABLE access_request_policies (
      group_uid text COLLATE "C" PRIMARY KEY REFERENCES groups(uid) ON DELETE CASCADE,
      approvals integer NOT NULL CHECK (approvals BETWEEN 1 AND 10),
      timeout_seconds integer NOT NULL CHECK (timeout_seconds > 0),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE access_request_policies; DROP TABLE access_requests;`);
}
