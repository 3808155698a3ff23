import { mountSubscriptionRoutes } from '../api/routes/subscription-routes.js';
import { KnexSubscriptionStore } from '../db/stores/subscription-store.js';
import { SubscriptionService } from '../resources/subscriptions/subscription-service.js';
import { SUBSCRIPTION_KIND } from '../wire/subscription-wire.js';
import { defineFeature } from './feature.js';

/**
 * Event subscriptions: the events of a group and below delivered to a sink (docs/events.md).
 * REST only: the gRPC door has no events API. The delivery worker reads subscriptions
 * through the outbox store, not through this service.
 */
export const subscriptionFeature = defineFeature({
  key: 'subscriptions',
  kinds: [SUBSCRIPTION_KIND],
  grpcServices: [],
  create: (d) => {
    const service = new SubscriptionService({
      ...d.common,
      subscriptions: new KnexSubscriptionStore(),
      allowPrivateSinks: d.config.allowPrivateSinks,
    });
    return {
      service,
      rest: (t, bodyLimit) => mountSubscriptionRoutes(t, service, bodyLimit),
      grpc: () => {},
    };
  },
});
