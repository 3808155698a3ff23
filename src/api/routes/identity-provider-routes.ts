import { IDP_LIST } from '../../resources/identity-providers/identity-provider.js';
import type { IdentityProviderService } from '../../resources/identity-providers/identity-provider-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import {
  identityProviderV1,
  identityProviderV1Schema,
  identityProviderV2,
  identityProviderV2Schema,
} from '../../wire/identity-provider-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** `/iam/v2beta1/identityProviders` and v1's `/iam/v1/identityProviders` (PUT replaces). */
export function mountIdentityProviderRoutes(
  t: RouteTarget,
  idps: IdentityProviderService,
  bodyLimit: number,
): void {
  const common = {
    name: 'IdentityProvider',
    spec: IDP_LIST,
    createSchema: idps.schemas.create,
    updateSchema: idps.schemas.patch,
    bodyLimit,
  };
  const path = '/iam/v2beta1/identityProviders';
  mountV2(t, idps, {
    ...common,
    path,
    plural: 'identityProviders',
    wireSchema: identityProviderV2Schema,
    toWire: identityProviderV2,
    examples: examplesFor(path),
  });
  const v1 = '/iam/v1/identityProviders';
  mountV1(t, idps, {
    ...common,
    path: v1,
    wireSchema: identityProviderV1Schema,
    toWire: identityProviderV1,
    examples: examplesFor(v1),
  });
}
