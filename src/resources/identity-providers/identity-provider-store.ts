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
  /** Sealed by the service (`SecretBox`), or '' for none: the store never sees plain text. */
  sealedClientSecret: string;
}

/** A stored client secret as the resealing pass sees it. */
export interface StoredClientSecret {
  uid: string;
  value: string;
  /** False for a row written before secrets were sealed: `value` is plain text. */
  sealed: boolean;
}

export interface IdentityProviderPatchRow {
  name?: string;
  description?: string;
  defaultRole?: string;
  oidc?: OidcConfig;
  /** Sealed, as in `NewIdentityProvider`; absent keeps the stored secret. */
  sealedClientSecret?: string;
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
  /** The stored (sealed) client secret of one IdP; undefined when there is no such IdP. */
  clientSecret(tx: Tx, uid: string): Promise<StoredClientSecret | undefined>;
  /** Every non-empty stored secret that is plain text or sealed by a key other than `kid`. */
  secretsToReseal(tx: Tx, currentKidPrefix: string): Promise<StoredClientSecret[]>;
  /** Every sealed stored secret, read without a lock (what a backup must be able to open). */
  sealedSecrets(tx: Tx): Promise<string[]>;
  /** Replace a stored secret with its sealed form, unless it changed meanwhile. */
  replaceSecret(tx: Tx, uid: string, old: string, sealed: string): Promise<void>;
}
