import { AUDIT_LIST } from '../../resources/audit/audit-event.js';
import type { AuditService } from '../../resources/audit/audit-service.js';
import {
  subscriptionCreateSchema,
  subscriptionPatchSchema,
} from '../../resources/subscriptions/subscription-input.js';
import type { SubscriptionService } from '../../resources/subscriptions/subscription-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { auditEventV2, auditEventV2Schema } from '../../wire/audit-wire.js';
import { SUBSCRIPTION_KIND } from '../../wire/kinds.js';
import { mountV2, v2Kind } from './crud.js';

/**
 * `GET /audit/v2beta1/events` (list only: the trail has no write path) and
 * `/events/v2beta1/subscriptions` (the usual CRUD and list contract).
 */
export function mountEventRoutes(
  t: RouteTarget,
  audit: AuditService,
  subscriptions: SubscriptionService,
  bodyLimit: number,
): void {
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
  mountV2(t, subscriptions, {
    ...v2Kind(SUBSCRIPTION_KIND),
    createSchema: subscriptionCreateSchema,
    updateSchema: subscriptionPatchSchema,
    examples: examplesFor(SUBSCRIPTION_KIND.path),
    bodyLimit,
  });
}
