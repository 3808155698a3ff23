import type { IdentityProviderService } from '../../resources/identity-providers/identity-provider-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import {
  IDENTITY_PROVIDER_KIND,
  identityProviderV1,
  identityProviderV1Schema,
} from '../../wire/identity-provider-wire.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

/** `/iam/v2beta1/identityProviders` and v1's `/iam/v1/identityProviders` (PUT replaces). */
export function mountIdentityProviderRoutes(
  t: RouteTarget,
  idps: IdentityProviderService,
  bodyLimit: number,
): void {
  const common = {
    name: IDENTITY_PROVIDER_KIND.name,
    spec: IDENTITY_PROVIDER_KIND.spec,
    createSchema: idps.schemas.create,
    updateSchema: idps.schemas.patch,
    bodyLimit,
  };
  mountV2(t, idps, {
    ...common,
    ...v2Kind(IDENTITY_PROVIDER_KIND),
    examples: examplesFor(IDENTITY_PROVIDER_KIND.path),
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
