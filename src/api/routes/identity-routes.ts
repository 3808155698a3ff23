import type { IdentityService } from '../../resources/identities/identity-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { identityV1, identityV1Schema } from '../../wire/identity-wire.js';
import { IDENTITY_KIND } from '../../wire/kinds.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

/** `/iam/v2beta1/identities` and v1's `/iam/v1/identities`. */
export function mountIdentityRoutes(t: RouteTarget, s: IdentityService, bodyLimit: number): void {
  const common = {
    name: IDENTITY_KIND.name,
    spec: IDENTITY_KIND.spec,
    createSchema: s.schemas.create,
    updateSchema: s.schemas.patch,
    bodyLimit,
  };
  mountV2(t, s, {
    ...common,
    ...v2Kind(IDENTITY_KIND),
    examples: examplesFor(IDENTITY_KIND.path),
  });
  const v1 = '/iam/v1/identities';
  mountV1(t, s, {
    ...common,
    path: v1,
    wireSchema: identityV1Schema,
    toWire: identityV1,
    examples: examplesFor(v1),
  });
}
