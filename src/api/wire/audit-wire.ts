import type { AuditEvent } from '../../resources/audit/audit-event.js';
import { ts } from './time.js';

export function auditEventV2(e: AuditEvent) {
  return {
    id: e.id,
    time: ts(e.time),
    actor: e.actor,
    door: e.door,
    ...(e.requestId !== null ? { requestId: e.requestId } : {}),
    ...(e.credential !== null ? { credential: e.credential } : {}),
    resourceType: e.resourceType,
    resourceUid: e.resourceUid,
    operation: e.operation,
    eventType: e.eventType,
    changedFields: e.changedFields,
    ...(e.before !== null ? { before: e.before } : {}),
    ...(e.after !== null ? { after: e.after } : {}),
  };
}
