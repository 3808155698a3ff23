import type { IdentityProvider } from '../../resources/identity-providers/identity-provider.js';
import { ts } from './time.js';

/** The OIDC block as clients see it: never the client secret, which is write-only. */
function oidcWire(i: IdentityProvider) {
  return {
    issuer: i.oidc.issuer,
    clientId: i.oidc.clientId,
    additionalScopes: i.oidc.additionalScopes,
    pkceEnabled: i.oidc.pkceEnabled,
  };
}

export function identityProviderV2(i: IdentityProvider) {
  return {
    uid: i.uid,
    name: i.name,
    description: i.description,
    defaultRole: i.defaultRole,
    oidc: oidcWire(i),
    createTime: ts(i.createTime),
    updateTime: ts(i.updateTime),
  };
}

/** v1 `IdentityProvider` has `id` and no timestamps. */
export function identityProviderV1(i: IdentityProvider) {
  return {
    id: i.uid,
    name: i.name,
    description: i.description,
    defaultRole: i.defaultRole,
    oidc: oidcWire(i),
  };
}
