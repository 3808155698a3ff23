import { mountAccessReviewRoutes } from '../api/routes/access-review-routes.js';
import { KnexAccessReviewStore } from '../db/stores/access-review-store.js';
import { AccessReviewsService } from '../gen/arbor/iam/v2beta1/access_reviews_pb.js';
import { mountAccessReviewRpcs } from '../grpc/access-review-rpcs.js';
import { AccessReviewService } from '../resources/access-reviews/access-review-service.js';
import { PathBook } from '../resources/names/path-book.js';
import { ACCESS_REVIEW_KIND } from '../wire/access-review-wire.js';
import { defineFeature } from './feature.js';

/** Access reviews: a group's role bindings reviewed by date, item by item, and on a schedule. */
export const accessReviewFeature = defineFeature({
  key: 'accessReviews',
  kinds: [ACCESS_REVIEW_KIND],
  grpcServices: [AccessReviewsService],
  create: (d) => {
    const roleBindings = d.services.roleBindings;
    const service = new AccessReviewService({
      ...d.common,
      reviews: new KnexAccessReviewStore(),
      bindings: d.stores.roleBindings,
      // The item shows its holder and role to whoever may decide it (as an access request
      // shows its requester to an approver): only the decider's own rights are asked.
      updatable: (p, uid, patch) =>
        roleBindings.requireUpdatable(p, uid, patch, { identity: true, role: true }),
      // Paths of names beside the items' uids (each page's names in one read).
      paths: new PathBook({ uow: d.common.uow, authz: d.common.authz, names: d.stores.names }),
    });
    return {
      service,
      rest: (t, bodyLimit) => mountAccessReviewRoutes(t, service, bodyLimit),
      grpc: (router, auth) => mountAccessReviewRpcs(router, auth, service),
    };
  },
});
