import type { AuditEvent } from '../audit/audit-event.js';

/**
 * The CloudEvents 1.0 envelope Arbor sends, in structured mode
 * (`Content-Type: application/cloudevents+json`): the whole event is the body.
 */
export interface CloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  data: Record<string, unknown> | null;
  /** Extension attributes (lowercase alphanumeric names, CloudEvents §3.1.1). */
  arboractor: string;
  arbordoor: string;
  arboroperation: string;
  /**
   * A change made with a delegated token: the uids that acted for `arboractor`, space
   * separated, as the token's `act` nests them (the audit record's `actors`).
   */
  arboractors?: string;
  /** Why a change nobody asked for directly was made (`IDENTITY_DELETED`, `EXPIRED`). */
  arborreason?: string;
  /** The uid of the resource whose change carried this one along (the deleted identity). */
  arborcausesubject?: string;
}

export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';

/**
 * The event for an audit record. `data` is the resource as the API shows it: after the
 * change, or its last state for a delete. `source` + `id` is unique per event.
 */
export function toCloudEvent(e: AuditEvent, source: string): CloudEvent {
  return {
    specversion: '1.0',
    id: e.id,
    source,
    type: e.eventType,
    subject: e.resourceUid,
    time: e.time.toISOString(),
    datacontenttype: 'application/json',
    data: e.after ?? e.before,
    arboractor: e.actor,
    arbordoor: e.door,
    arboroperation: e.operation,
    ...(e.actors === null ? {} : { arboractors: e.actors.join(' ') }),
    ...(e.cause ? { arborreason: e.cause.reason } : {}),
    ...(e.cause?.resourceUid !== undefined ? { arborcausesubject: e.cause.resourceUid } : {}),
  };
}
