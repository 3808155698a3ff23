import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { IdentityProvider, OidcConfig } from './identity-provider.js';

export interface NewIdentityProvider {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
  defaultRole: string;
  oidc: OidcConfig;
  clientSecret: string;
}

export interface IdentityProviderPatchRow {
  name?: string;
  description?: string;
  defaultRole?: string;
  oidc?: OidcConfig;
  /** Absent keeps the stored secret. */
  clientSecret?: string;
}

/** Storage of identity providers. No method ever returns the client secret. */
export interface IdentityProviderStore {
  get(tx: Tx, uid: string, opts?: { forUpdate?: boolean }): Promise<IdentityProvider | undefined>;
  /** @throws RpcError NOT_FOUND when the group vanished meanwhile. */
  insert(tx: Tx, idp: NewIdentityProvider): Promise<IdentityProvider>;
  update(
    tx: Tx,
    uid: string,
    patch: IdentityProviderPatchRow,
  ): Promise<IdentityProvider | undefined>;
  /** @returns false when nothing was there. */
  delete(tx: Tx, uid: string): Promise<boolean>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<IdentityProvider>>;
}
