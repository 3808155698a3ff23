import { mountIdentityProviderRoutes } from '../api/routes/identity-provider-routes.js';
import { KnexIdentityProviderStore } from '../db/stores/identity-provider-store.js';
import { IdentityProvidersService } from '../gen/arbor/iam/v2beta1/identity_providers_pb.js';
import { mountCrud } from '../grpc/crud.js';
import { IdentityProviderService } from '../resources/identity-providers/identity-provider-service.js';
import { IDENTITY_PROVIDER_KIND } from '../wire/identity-provider-wire.js';
import { defineFeature } from './feature.js';

/** Identity providers: an organization's OIDC providers for people's sign-in. */
export const identityProviderFeature = defineFeature({
  key: 'identityProviders',
  kinds: [IDENTITY_PROVIDER_KIND],
  grpcServices: [IdentityProvidersService],
  create: (d) => {
    const service = new IdentityProviderService({
      ...d.common,
      groups: d.stores.groups,
      roles: d.stores.roles,
      idps: new KnexIdentityProviderStore(),
      allowInsecureIssuers: d.config.allowInsecureIssuers,
      serverLogin: d.serverLogin,
      secrets: d.secrets,
    });
    return {
      service,
      rest: (t, bodyLimit) => mountIdentityProviderRoutes(t, service, bodyLimit),
      grpc: (router, auth) =>
        mountCrud(router, auth, IdentityProvidersService, service, IDENTITY_PROVIDER_KIND),
    };
  },
});
