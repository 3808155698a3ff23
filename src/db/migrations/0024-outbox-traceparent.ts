import type { Knex } from 'knex';

/**
 * The trace context of the request (or reconcile) that recorded an event, kept with each of
 * its outbox rows, so that the event's deliveries join that trace (docs/operations.md,
 * "Tracing"). NULL while tracing is off, and for rows queued before this migration.
 *
 * The value starts from a client's `traceparent` header (its trace id and sampled flag), so
 * the column takes exactly one fixed form, a W3C Trace Context version-00 `traceparent`
 * with flags 00 or 01 and nothing else: no tracestate, no baggage, no room for anything a
 * client would like to smuggle into a sink's request. The writer only ever produces that
 * form (src/tracing/spans.ts, `currentTraceparent`); the CHECK makes it a property of the
 * table. Adding a nullable column without a default rewrites nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE event_outbox ADD COLUMN traceparent text
      CONSTRAINT event_outbox_traceparent_format
      CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE event_outbox DROP COLUMN traceparent;`);
}
