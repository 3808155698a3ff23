import type Router from '@koa/router';
import { IDP_LIST } from '../../resources/identity-providers/identity-provider.js';
import type { IdentityProviderService } from '../../resources/identity-providers/identity-provider-service.js';
import { identityProviderV1, identityProviderV2 } from '../wire/identity-provider-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** `/iam/v2beta1/identityProviders` and v1's `/iam/v1/identityProviders` (PUT replaces). */
export function mountIdentityProviderRoutes(
  router: Router,
  idps: IdentityProviderService,
  bodyLimit: number,
): void {
  mountV2(router, idps, {
    path: '/iam/v2beta1/identityProviders',
    plural: 'identityProviders',
    spec: IDP_LIST,
    toWire: identityProviderV2,
    bodyLimit,
  });
  mountV1(router, idps, {
    path: '/iam/v1/identityProviders',
    spec: IDP_LIST,
    toWire: identityProviderV1,
    bodyLimit,
  });
}
