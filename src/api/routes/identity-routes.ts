import type Router from '@koa/router';
import { IDENTITY_LIST } from '../../resources/identities/identity.js';
import type { IdentityService } from '../../resources/identities/identity-service.js';
import { identityV1, identityV2 } from '../wire/identity-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** `/iam/v2beta1/identities` and v1's `/iam/v1/identities`. */
export function mountIdentityRoutes(router: Router, s: IdentityService, bodyLimit: number): void {
  mountV2(router, s, {
    path: '/iam/v2beta1/identities',
    plural: 'identities',
    spec: IDENTITY_LIST,
    toWire: identityV2,
    bodyLimit,
  });
  mountV1(router, s, {
    path: '/iam/v1/identities',
    spec: IDENTITY_LIST,
    toWire: identityV1,
    bodyLimit,
  });
}
