import type { Knex } from 'knex';
import { upsertBuiltinRoles } from './0002-iam.js';

/**
 * The audit trail, event subscriptions and the transactional outbox (docs/events.md).
 *
 * - `audit_events` is append-only: a trigger refuses UPDATE, DELETE and TRUNCATE, so no
 *   code path of the application (or a mistaken one) can rewrite history. `seq` is the
 *   order events were recorded in; `id` is the public id (the CloudEvent `id`).
 * - `subscriptions` hang under groups like every resource, and carry their delivery state
 *   (failures, dead letter, the lease a delivery worker holds while it sends).
 * - `event_outbox` holds one row per (subscription, event) still to deliver, written in the
 *   same transaction as the change; a row leaves once its sink answered 2xx.
 *
 * The built-in roles are upserted again: `owner` gains `audit.list` and `subscriptions.*`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE audit_events (
      id text COLLATE "C" PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY CONSTRAINT audit_events_seq_key UNIQUE,
      occurred_at timestamptz(3) NOT NULL,
      actor text COLLATE "C" NOT NULL,
      actor_kind text NOT NULL,
      door text NOT NULL,
      request_id text,
      credential text,
      resource_type text COLLATE "C" NOT NULL,
      resource_uid text COLLATE "C" NOT NULL,
      resource_parent_uid text COLLATE "C",
      operation text NOT NULL,
      event_type text COLLATE "C" NOT NULL,
      changed_fields jsonb NOT NULL DEFAULT '[]',
      before jsonb,
      after jsonb
    );
    CREATE INDEX audit_events_time ON audit_events (occurred_at, id);
    CREATE INDEX audit_events_resource ON audit_events (resource_uid, occurred_at, id);
    CREATE INDEX audit_events_parent ON audit_events (resource_parent_uid, occurred_at, id);
    CREATE INDEX audit_events_actor ON audit_events (actor, occurred_at, id);

    CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit_events is append-only' USING ERRCODE = '42501';
    END
    $$;
    CREATE TRIGGER audit_events_no_update_delete BEFORE UPDATE OR DELETE ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
    CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();

    CREATE TABLE subscriptions (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE RESTRICT,
      name text COLLATE "C" NOT NULL,
      description text NOT NULL DEFAULT '',
      sink text NOT NULL,
      types jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now(),
      state text NOT NULL DEFAULT 'ACTIVE',
      consecutive_failures integer NOT NULL DEFAULT 0,
      last_error text,
      last_attempt_at timestamptz(3),
      last_delivered_at timestamptz(3),
      dead_lettered_at timestamptz(3),
      delivered_count bigint NOT NULL DEFAULT 0,
      next_attempt_at timestamptz(3) NOT NULL DEFAULT now(),
      lease_owner text,
      lease_until timestamptz(3),
      CONSTRAINT subscriptions_parent_name_key UNIQUE (parent_uid, name)
    );
    CREATE INDEX subscriptions_parent_name ON subscriptions (parent_uid, name, uid);
    CREATE INDEX subscriptions_parent_created ON subscriptions (parent_uid, created_at, uid);
    CREATE INDEX subscriptions_name ON subscriptions (name, uid);
    CREATE INDEX subscriptions_created ON subscriptions (created_at, uid);
    CREATE INDEX subscriptions_due ON subscriptions (next_attempt_at) WHERE state = 'ACTIVE';

    CREATE TABLE event_outbox (
      subscription_uid text COLLATE "C" NOT NULL
        REFERENCES subscriptions(uid) ON DELETE CASCADE,
      event_seq bigint NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      PRIMARY KEY (subscription_uid, event_seq)
    );
  `);
  await upsertBuiltinRoles(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE event_outbox;
    DROP TABLE subscriptions;
    DROP TABLE audit_events;
    DROP FUNCTION audit_events_append_only();
  `);
}
