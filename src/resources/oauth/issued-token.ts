import type { SignedApiToken } from '../../auth/token-issuer.js';
import type { ListSpec } from '../../core/list-request.js';
import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';

/** The audit record's resource type of a revoked API token (`dev.arbor.iam.api_token.deleted.v1`). */
export const API_TOKEN_TYPE = 'iam.arbor.dev/ApiToken';

/** An issued API token, as recorded (migration 0031): never the token itself. */
export interface IssuedToken {
  jti: string;
  identityUid: string;
  /** The subject token's jti, when it was exchanged from an API token. */
  parentJti: string | null;
  /** Every jti it was exchanged from, nearest first: revoking any of them revokes it. */
  ancestors: string[];
  /** The identity acting for the subject (delegation), or null. */
  actor: string | null;
  scope: string[] | null;
  groups: string[] | null;
  issueTime: Date;
  expireTime: Date;
}

/**
 * `GET /iam/v2beta1/tokens`: the caller's live, unrevoked tokens, newest first by default.
 * `identity` (the admin only, who sees every identity's) keeps one identity's.
 */
export const ISSUED_TOKEN_LIST: ListSpec = {
  kind: 'api_tokens',
  orderBy: ['issue_time', 'expire_time'],
  defaultOrder: { field: 'issue_time', direction: 'desc' },
  filters: { identity: 'uid', parent: 'string' },
  filterNotes: {
    identity:
      "The identity whose tokens to list (the admin's filter; anyone else sees only its own).",
    parent: 'The jti of the token they were exchanged from: its direct descendants.',
  },
};

/** A jti as Arbor writes them (a UUID) or any at most 64 URL-safe characters. */
export const JTI_PATTERN = /^[A-Za-z0-9._~-]{1,64}$/;

/** Where issued tokens are recorded (db/stores/issued-token-store.ts). */
export interface IssuedTokenStore {
  /** Record a batch (a jti again is a no-op). */
  record(tx: Tx, batch: readonly SignedApiToken[]): Promise<void>;
  /** Delete at most `limit` rows past their expiry; answers how many went. */
  sweep(tx: Tx, limit: number): Promise<number>;
  /** One keyset page of live, unrevoked tokens (neither expired nor revoked, nor a parent). */
  list(tx: Tx, q: PageQuery): Promise<StorePage<IssuedToken>>;
  /** The live, unrevoked token `jti` of `identityUid` (any identity's when undefined). */
  get(tx: Tx, jti: string, identityUid: string | undefined): Promise<IssuedToken | undefined>;
}

/** How a token is shown in answers and in the audit record of its revocation. */
export function issuedTokenV2(t: IssuedToken): Record<string, unknown> {
  return {
    jti: t.jti,
    identity: t.identityUid,
    ...(t.parentJti === null ? {} : { parentJti: t.parentJti }),
    ...(t.actor === null ? {} : { actor: t.actor }),
    ...(t.scope === null ? {} : { scope: t.scope }),
    ...(t.groups === null ? {} : { groups: t.groups }),
    issueTime: t.issueTime.toISOString(),
    expireTime: t.expireTime.toISOString(),
  };
}
