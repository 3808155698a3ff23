import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';

/**
 * Which OIDC tokens may assume an identity. Exactly one of `issuer`/`issuerPattern` and
 * one of `subject`/`subjectPattern`; patterns are RE2 regular expressions matched in
 * linear time against the whole claim, and an `issuerPattern` must begin with a literal
 * `https://host/` (see `claim-pattern.ts`).
 */
export interface ClaimMatch {
  issuer?: string;
  issuerPattern?: string;
  subject?: string;
  subjectPattern?: string;
  audience?: string;
  /** Further claims that must equal these values exactly. */
  claims?: Record<string, string>;
}

/** Tokens signed by keys the identity carries itself (no discovery at the issuer). */
export interface StaticKeys {
  issuer: string;
  subject: string;
  /** A JWKS document, `{"keys":[…]}`, as a JSON string. */
  issuerKeys: string;
  /** After this the keys are no longer accepted. */
  expirationTime: Date;
}

/** An identity that workloads may assume: exactly one of `claimMatch` / `staticKeys`. */
export interface Identity {
  uid: string;
  parentUid: string | null;
  name: string;
  description: string;
  claimMatch?: ClaimMatch;
  staticKeys?: StaticKeys;
  /**
   * Set on a person's user identity: the provider that registered it (`server`, or an
   * organization IdP's uid), the only one that signs the person in (docs/sign-in.md).
   */
  signInProvider?: string;
  /** Last federation (token exchange); equals `createTime` until the first one. */
  lastSeenTime: Date;
  createTime: Date;
  updateTime: Date;
}

export const IDENTITY_TYPE = 'iam.arbor.dev/Identity';

export const IDENTITY_LIST: ListSpec = {
  kind: 'identities',
  orderBy: ['uid', 'name', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string', name_prefix: 'prefix' },
};

export const IDENTITY_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '', claimMatch: null, staticKeys: null },
  outputOnly: ['uid', 'createTime', 'updateTime', 'lastSeenTime'],
};

/** Static keys are accepted for at most this long after the identity was created. */
export const STATIC_KEYS_MAX_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

/** Longest accepted `issuerPattern` / `subjectPattern` (the compiled program is bounded too). */
export const MAX_PATTERN_LENGTH = 512;
