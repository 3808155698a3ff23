import {
  subscriptionCreateSchema,
  subscriptionPatchSchema,
} from '../../resources/subscriptions/subscription-input.js';
import type { SubscriptionService } from '../../resources/subscriptions/subscription-service.js';
import { SUBSCRIPTION_KIND } from '../../wire/subscription-wire.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { mountV2, v2Kind } from './crud.js';

/** `/events/v2beta1/subscriptions`: the usual CRUD and list contract (docs/events.md). */
export function mountSubscriptionRoutes(
  t: RouteTarget,
  subscriptions: SubscriptionService,
  bodyLimit: number,
): void {
  mountV2(t, subscriptions, {
    ...v2Kind(SUBSCRIPTION_KIND),
    createSchema: subscriptionCreateSchema,
    updateSchema: subscriptionPatchSchema,
    examples: examplesFor(SUBSCRIPTION_KIND.path),
    bodyLimit,
  });
}
