import type { Tx } from '../tx.js';

/** A person as an OIDC provider vouches for them. */
export interface Person {
  issuer: string;
  subject: string;
  email?: string;
  name?: string;
}

/** An organization's identity provider, as sign-in sees it. */
export interface LoginIdp {
  uid: string;
  groupUid: string;
  clientId: string;
  defaultRoleUid: string;
}

export interface UserStore {
  /** The user identity keyed by exactly this `(issuer, subject)`, if registered. */
  findUser(tx: Tx, issuer: string, subject: string): Promise<string | undefined>;
  /**
   * Register the person as a root-level identity with `uid`, unless a concurrent sign-in
   * did first. @returns the uid of the person's identity either way.
   */
  ensureUser(tx: Tx, uid: string, person: Person): Promise<string>;
  /** Identity providers of any organization that name this issuer. */
  idpsForIssuer(tx: Tx, issuer: string): Promise<LoginIdp[]>;
  /** Bind `roleUid` to the identity at the group, unless that binding exists. @returns true when made. */
  ensureBinding(
    tx: Tx,
    b: { uid: string; groupUid: string; identityUid: string; roleUid: string },
  ): Promise<boolean>;
}
