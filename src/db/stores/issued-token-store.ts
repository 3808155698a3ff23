import type { SignedApiToken } from '../../auth/token-issuer.js';
import type { IssuedToken, IssuedTokenStore } from '../../resources/oauth/issued-token.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { keysetPage, whereVisible } from '../keyset.js';
import { kx } from '../unit-of-work.js';

/** Rows per INSERT statement (nine parameters a row, far below the protocol's limit). */
const CHUNK = 500;

interface Row {
  jti: string;
  identity_uid: string;
  parent_jti: string | null;
  ancestors: string[];
  actor: string | null;
  scope: string[] | null;
  groups: string[] | null;
  issued_at: Date;
  expires_at: Date;
}

const COLUMNS = [
  't.jti',
  't.identity_uid',
  't.parent_jti',
  't.ancestors',
  't.actor',
  't.scope',
  't.groups',
  't.issued_at',
  't.expires_at',
];

/** Live: not past its expiry, and neither it nor any token it was exchanged from revoked. */
const LIVE = `t.expires_at > now() AND NOT EXISTS (
  SELECT 1 FROM api_token_revocations r WHERE r.jti = t.jti OR r.jti = ANY(t.ancestors))`;

function toIssued(r: Row): IssuedToken {
  return {
    jti: r.jti,
    identityUid: r.identity_uid,
    parentJti: r.parent_jti,
    ancestors: r.ancestors ?? [],
    actor: r.actor,
    scope: r.scope,
    groups: r.groups,
    issueTime: new Date(r.issued_at),
    expireTime: new Date(r.expires_at),
  };
}

export class KnexIssuedTokenStore implements IssuedTokenStore {
  async record(tx: Tx, batch: readonly SignedApiToken[]): Promise<void> {
    const k = kx(tx);
    // Sorted by jti: two processes writing at once take their locks in the same order.
    const rows = [...batch]
      .sort((a, b) => (a.jti < b.jti ? -1 : a.jti > b.jti ? 1 : 0))
      .map((t) => ({
        jti: t.jti,
        identity_uid: t.subject,
        parent_jti: t.parents[0] ?? null,
        ancestors: t.parents.slice(0, 4),
        actor: t.actor ?? null,
        scope: t.scope === undefined ? null : [...t.scope],
        groups: t.groups === undefined ? null : [...t.groups],
        issued_at: new Date(t.iat * 1000),
        expires_at: new Date(t.exp * 1000),
      }));
    for (let i = 0; i < rows.length; i += CHUNK)
      await k('api_tokens_issued')
        .insert(rows.slice(i, i + CHUNK))
        .onConflict('jti')
        .ignore();
  }

  async sweep(tx: Tx, limit: number): Promise<number> {
    const r = (await kx(tx).raw(
      `DELETE FROM api_tokens_issued WHERE jti IN (
         SELECT jti FROM api_tokens_issued WHERE expires_at < now()
         ORDER BY expires_at LIMIT ?)`,
      [limit],
    )) as { rowCount?: number; affectedRows?: number };
    return r.rowCount ?? r.affectedRows ?? 0;
  }

  /** Visibility is by identity: the caller's own uid, or every identity's (the admin). */
  async list(tx: Tx, q: PageQuery): Promise<StorePage<IssuedToken>> {
    const k = kx(tx);
    const base = k('api_tokens_issued as t').whereRaw(LIVE);
    whereVisible(base, 't.identity_uid', q.visibility);
    if (q.filters.identity !== undefined) base.where('t.identity_uid', q.filters.identity);
    if (q.filters.parent !== undefined) base.where('t.parent_jti', q.filters.parent);
    const page = await keysetPage<Row & { uid: string }>(
      base,
      {
        sort: { issue_time: 't.issued_at', expire_time: 't.expires_at', uid: 't.jti' },
        uid: 't.jti',
      },
      q,
      (qb) => qb.select([...COLUMNS, k.raw('t.jti as uid')]),
    );
    return { ...page, items: page.items.map(toIssued) };
  }

  async get(
    tx: Tx,
    jti: string,
    identityUid: string | undefined,
  ): Promise<IssuedToken | undefined> {
    const qb = kx(tx)('api_tokens_issued as t').where('t.jti', jti).whereRaw(LIVE);
    if (identityUid !== undefined) qb.where('t.identity_uid', identityUid);
    const row = (await qb.first(COLUMNS)) as Row | undefined;
    return row === undefined ? undefined : toIssued(row);
  }
}
