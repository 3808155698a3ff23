import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';

/** The OIDC configuration of an identity provider, without its client secret. */
export interface OidcConfig {
  issuer: string;
  clientId: string;
  additionalScopes: string[];
  pkceEnabled: boolean;
}

/**
 * An upstream identity provider of a group. The client secret is write-only: it is stored
 * but never part of this type, so no read path can render it; `hasClientSecret` says
 * whether one is stored.
 */
export interface IdentityProvider {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
  /** The role granted to users of this provider on first sign-in. */
  defaultRole: string;
  oidc: OidcConfig;
  hasClientSecret: boolean;
  createTime: Date;
  updateTime: Date;
}

export const IDP_TYPE = 'iam.arbor.dev/IdentityProvider';

export const IDP_LIST: ListSpec = {
  kind: 'identityProviders',
  orderBy: ['uid', 'name', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string' },
};

/**
 * `oidc` is replaced as a whole; a mask naming it with no body value resets it to `{}`,
 * which fails validation (an IdP always has a configuration). An absent or empty
 * `oidc.clientSecret` keeps the stored secret: clients never see it, so they cannot echo it.
 */
export const IDP_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '', defaultRole: '', oidc: {} },
  outputOnly: ['uid', 'createTime', 'updateTime'],
};
