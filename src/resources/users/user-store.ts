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
  issuer: string;
  clientId: string;
  defaultRoleUid: string;
}

/** Where a new person's identity goes, and which provider it belongs to. */
export interface NewPerson {
  uid: string;
  /** NULL for the server login client's people; the IdP's group for an organization's. */
  parentUid: string | null;
  /** `server`, or the uid of the organization IdP that registers the person. */
  provider: string;
}

export interface UserStore {
  /** The user identity of exactly this `(provider, issuer, subject)`, if registered. */
  findUser(tx: Tx, provider: string, issuer: string, subject: string): Promise<string | undefined>;
  /**
   * Register the person, unless a concurrent sign-in through the same provider did first.
   * @returns the uid of the person's identity either way.
   */
  ensureUser(tx: Tx, at: NewPerson, person: Person): Promise<string>;
  /** How many people `provider` has registered. */
  countPeople(tx: Tx, provider: string): Promise<number>;
  /**
   * Lock the IdP's row until the transaction ends, so that registrations through it are
   * counted one at a time. @returns the IdP as it is now, or undefined when it is gone.
   */
  lockIdp(tx: Tx, uid: string): Promise<LoginIdp | undefined>;
  /** Identity providers of any organization that name this issuer. */
  idpsForIssuer(tx: Tx, issuer: string): Promise<LoginIdp[]>;
  /** One identity provider, or undefined. */
  idp(tx: Tx, uid: string): Promise<LoginIdp | undefined>;
  /** Bind `roleUid` to the identity at the group, unless that binding exists. @returns true when made. */
  ensureBinding(
    tx: Tx,
    b: { uid: string; groupUid: string; identityUid: string; roleUid: string },
  ): Promise<boolean>;
}
