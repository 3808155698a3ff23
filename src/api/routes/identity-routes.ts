import { IDENTITY_LIST } from '../../resources/identities/identity.js';
import type { IdentityService } from '../../resources/identities/identity-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import {
  identityV1,
  identityV1Schema,
  identityV2,
  identityV2Schema,
} from '../../wire/identity-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** `/iam/v2beta1/identities` and v1's `/iam/v1/identities`. */
export function mountIdentityRoutes(t: RouteTarget, s: IdentityService, bodyLimit: number): void {
  const common = {
    name: 'Identity',
    spec: IDENTITY_LIST,
    createSchema: s.schemas.create,
    updateSchema: s.schemas.patch,
    bodyLimit,
  };
  const path = '/iam/v2beta1/identities';
  mountV2(t, s, {
    ...common,
    path,
    plural: 'identities',
    wireSchema: identityV2Schema,
    toWire: identityV2,
    examples: examplesFor(path),
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
