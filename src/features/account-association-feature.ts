import { mountAccountAssociationRoutes } from '../api/routes/account-association-routes.js';
import { KnexAccountAssociationStore } from '../db/stores/account-association-store.js';
import { AccountAssociationsService } from '../gen/arbor/iam/v2beta1/account_associations_pb.js';
import { mountCrud } from '../grpc/crud.js';
import { AccountAssociationService } from '../resources/account-associations/account-association-service.js';
import { ACCOUNT_ASSOCIATION_KIND } from '../wire/account-association-wire.js';
import { defineFeature } from './feature.js';

/** Account associations: a group's cloud accounts, one association per group. */
export const accountAssociationFeature = defineFeature({
  key: 'accountAssociations',
  kinds: [ACCOUNT_ASSOCIATION_KIND],
  grpcServices: [AccountAssociationsService],
  create: (d) => {
    const service = new AccountAssociationService({
      ...d.common,
      groups: d.stores.groups,
      associations: new KnexAccountAssociationStore(),
    });
    return {
      service,
      rest: (t, bodyLimit) => mountAccountAssociationRoutes(t, service, bodyLimit),
      grpc: (router, auth) =>
        mountCrud(router, auth, AccountAssociationsService, service, ACCOUNT_ASSOCIATION_KIND),
    };
  },
});
