import { mountAccessRequestRoutes } from '../api/routes/access-request-routes.js';
import { KnexAccessRequestStore } from '../db/stores/access-request-store.js';
import { AccessRequestsService } from '../gen/arbor/iam/v2beta1/access_requests_pb.js';
import { mountAccessRequestRpcs } from '../grpc/access-request-rpcs.js';
import { AccessRequestService } from '../resources/access-requests/access-request-service.js';
import { PathBook } from '../resources/names/path-book.js';
import { ACCESS_REQUEST_KIND } from '../wire/access-request-wire.js';
import { defineFeature } from './feature.js';

/**
 * Access requests: an identity asks for a role at a group for a while, approvers decide
 * (docs/access-requests.md). The binding sweeper closes timed-out requests through
 * `arbor.services.accessRequests` (compose.ts).
 */
export const accessRequestFeature = defineFeature({
  key: 'accessRequests',
  kinds: [ACCESS_REQUEST_KIND],
  grpcServices: [AccessRequestsService],
  create: (d) => {
    const { uow, authz } = d.common;
    const roleBindings = d.services.roleBindings;
    const service = new AccessRequestService({
      ...d.common,
      requests: new KnexAccessRequestStore(),
      bindings: d.stores.roleBindings,
      // An approval makes the binding only if the approver could create it now.
      bindable: (p, t, known) => roleBindings.requireCreatable(p, t, known),
      // Paths of names beside uids in answers (stateless: each page's names in one read).
      paths: new PathBook({ uow, authz, names: d.stores.names }),
    });
    return {
      service,
      rest: (t, bodyLimit) => mountAccessRequestRoutes(t, service, bodyLimit),
      grpc: (router, auth) => mountAccessRequestRpcs(router, auth, service),
    };
  },
});
