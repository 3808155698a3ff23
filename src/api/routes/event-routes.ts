import type Router from '@koa/router';
import { AUDIT_LIST } from '../../resources/audit/audit-event.js';
import type { AuditService } from '../../resources/audit/audit-service.js';
import { SUBSCRIPTION_LIST } from '../../resources/subscriptions/subscription.js';
import type { SubscriptionService } from '../../resources/subscriptions/subscription-service.js';
import { auditEventV2 } from '../wire/audit-wire.js';
import { subscriptionV2 } from '../wire/subscription-wire.js';
import { mountV2 } from './crud.js';

/**
 * `GET /audit/v2beta1/events` (list only: the trail has no write path) and
 * `/events/v2beta1/subscriptions` (the usual CRUD and list contract).
 */
export function mountEventRoutes(
  router: Router,
  audit: AuditService,
  subscriptions: SubscriptionService,
  bodyLimit: number,
): void {
  mountV2(
    router,
    { list: audit.list.bind(audit) },
    {
      path: '/audit/v2beta1/events',
      plural: 'events',
      spec: AUDIT_LIST,
      toWire: auditEventV2,
      bodyLimit,
    },
  );
  mountV2(router, subscriptions, {
    path: '/events/v2beta1/subscriptions',
    plural: 'subscriptions',
    spec: SUBSCRIPTION_LIST,
    toWire: subscriptionV2,
    bodyLimit,
  });
}
