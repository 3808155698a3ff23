import { AUDIT_LIST } from '../../resources/audit/audit-event.js';
import type { AuditService } from '../../resources/audit/audit-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { auditEventV2, auditEventV2Schema } from '../../wire/audit-wire.js';
import { mountV2 } from './crud.js';

/**
 * `GET /audit/v2beta1/events` (list only: the trail has no write path). Subscriptions to
 * the events are a feature (subscription-routes.ts).
 */
export function mountEventRoutes(t: RouteTarget, audit: AuditService, bodyLimit: number): void {
  const auditPath = '/audit/v2beta1/events';
  mountV2(
    t,
    { list: audit.list.bind(audit) },
    {
      path: auditPath,
      plural: 'events',
      name: 'AuditEvent',
      tag: 'Audit',
      spec: AUDIT_LIST,
      wireSchema: auditEventV2Schema,
      toWire: auditEventV2,
      examples: examplesFor(auditPath),
      bodyLimit,
    },
  );
}
