import type { Knex } from 'knex';
import type { UsageBatch } from '../../auth/usage-recorder.js';
import type { Visibility } from '../../core/visibility.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import type {
  UnusedAccessStore,
  UnusedFinding,
  UnusedQuery,
} from '../../resources/usage/unused-access.js';
import type { UsageWriter } from '../../resources/usage/usage-flusher.js';
import { keysetPage, whereVisible } from '../keyset.js';
import { kx } from '../unit-of-work.js';

/**
 * A batch of binding uses in one statement: rows of bindings deleted since are skipped (the
 * join); a time never moves backwards, and moves only by at least the batch's resolution
 * (the conflict clause: a row left as it is is not written), so that however many
 * processes record uses of one binding, its row is written at most once per resolution.
 * Uids arrive sorted, so two processes flushing at once lock rows in the same order and
 * cannot deadlock.
 */
const BINDINGS = `
  INSERT INTO binding_usage (binding_uid, last_used_at)
  SELECT u.uid, u.at FROM unnest(?::text[], ?::timestamptz[]) AS u(uid, at)
    JOIN role_bindings rb ON rb.uid = u.uid
  ON CONFLICT (binding_uid) DO UPDATE SET last_used_at = excluded.last_used_at
    WHERE binding_usage.last_used_at
        < excluded.last_used_at - ?::double precision * interval '1 millisecond'`;

/**
 * Identities' last authentication is their lastSeenTime, kept to the resolution (a minute by
 * default) as the STS always kept it: a row is written only when its time is that old, or
 * still its createTime.
 */
const IDENTITIES = `
  UPDATE identities i SET last_seen_at = u.at
    FROM unnest(?::text[], ?::timestamptz[]) AS u(uid, at)
   WHERE i.uid = u.uid AND i.last_seen_at < u.at
     AND (i.last_seen_at < u.at - ?::double precision * interval '1 millisecond'
          OR i.last_seen_at = i.created_at)`;

function sortedColumns(m: ReadonlyMap<string, number>): [string[], string[]] {
  const uids = [...m.keys()].sort();
  return [uids, uids.map((u) => new Date(m.get(u) ?? 0).toISOString())];
}

interface FindingRow {
  kind: 'roleBinding' | 'identity';
  uid: string;
  group_uid: string | null;
  identity_uid: string;
  role_uid: string | null;
  created_at: Date;
  last_used_at: Date | null;
  expire_time: Date | null;
  not_before: Date | null;
}

/** Last-used writes, and the unused-access findings read from them. */
export class KnexUsageStore implements UsageWriter, UnusedAccessStore {
  async record(tx: Tx, batch: UsageBatch): Promise<void> {
    const k = kx(tx);
    const r = batch.resolutionMs;
    if (batch.bindings.size > 0) await k.raw(BINDINGS, [...sortedColumns(batch.bindings), r]);
    if (batch.identities.size > 0) await k.raw(IDENTITIES, [...sortedColumns(batch.identities), r]);
  }

  async unusedPage(
    tx: Tx,
    u: UnusedQuery,
    q: PageQuery,
  ): Promise<StorePage<Omit<UnusedFinding, 'expireBindings'>>> {
    const k = kx(tx);
    const inGroup = (qb: Knex.QueryBuilder, col: string) =>
      u.group === undefined ? qb : whereVisible(qb, col, { kind: 'scopes', scopes: [u.group] });
    const bindings = (qb: Knex.QueryBuilder) =>
      inGroup(
        whereVisible(
          qb
            .from('role_bindings as rb')
            .leftJoin('binding_usage as bu', 'bu.binding_uid', 'rb.uid')
            .select(
              k.raw(`'roleBinding' AS kind`),
              'rb.uid',
              'rb.parent_uid as group_uid',
              'rb.identity_uid',
              'rb.role_uid',
              'rb.created_at',
              'bu.last_used_at',
              'rb.expire_time',
              'rb.not_before',
            )
            .where((w) => w.whereNull('rb.expire_time').orWhere('rb.expire_time', '>', k.fn.now()))
            // A binding cannot be used before it starts: never used, it counts from the later
            // of its creation and its notBefore (GREATEST skips a NULL notBefore), so one not
            // started yet, or started within the window, is no finding.
            .whereRaw('COALESCE(bu.last_used_at, GREATEST(rb.created_at, rb.not_before)) < ?', [
              u.cutoff,
            ]),
          'rb.parent_uid',
          u.view.bindings,
        ),
        'rb.parent_uid',
      );
    const identities = (qb: Knex.QueryBuilder) =>
      inGroup(
        whereVisible(
          qb
            .from('identities as i')
            .select(
              k.raw(`'identity' AS kind`),
              'i.uid',
              'i.parent_uid as group_uid',
              'i.uid as identity_uid',
              k.raw('NULL::text AS role_uid'),
              'i.created_at',
              k.raw(
                'CASE WHEN i.last_seen_at = i.created_at THEN NULL ELSE i.last_seen_at END AS last_used_at',
              ),
              k.raw('NULL::timestamptz AS expire_time'),
              k.raw('NULL::timestamptz AS not_before'),
            )
            .where('i.last_seen_at', '<', u.cutoff),
          'i.parent_uid',
          u.view.identities,
        ),
        'i.parent_uid',
      );
    const parts =
      u.kind === 'roleBinding'
        ? [bindings]
        : u.kind === 'identity'
          ? [identities]
          : [bindings, identities];
    const [first, ...rest] = parts.map((f) => f(k.queryBuilder()));
    const union = rest.length > 0 && first ? first.unionAll(rest) : first;
    const base = k.queryBuilder().from(union!.as('u'));
    const page = await keysetPage<FindingRow>(
      base,
      { sort: { uid: 'u.uid' }, uid: 'u.uid' },
      q,
      (b) => b.select('u.*'),
    );
    return { ...page, items: page.items.map(toFinding) };
  }

  async liveBindingsOf(
    tx: Tx,
    identityUids: readonly string[],
    bindings: Visibility,
  ): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (identityUids.length === 0) return out;
    const k = kx(tx);
    const rows = (await whereVisible(
      k('role_bindings as rb')
        .select('rb.uid', 'rb.identity_uid')
        .whereIn('rb.identity_uid', [...identityUids])
        .where((w) => w.whereNull('rb.expire_time').orWhere('rb.expire_time', '>', k.fn.now()))
        // Started ones only: a scheduled binding's expiry may not come before its start.
        .where((w) => w.whereNull('rb.not_before').orWhere('rb.not_before', '<=', k.fn.now()))
        .orderBy('rb.uid'),
      'rb.parent_uid',
      bindings,
    )) as Array<{ uid: string; identity_uid: string }>;
    for (const r of rows) out.set(r.identity_uid, [...(out.get(r.identity_uid) ?? []), r.uid]);
    return out;
  }
}

function toFinding(r: FindingRow): Omit<UnusedFinding, 'expireBindings'> {
  return {
    kind: r.kind,
    uid: r.uid,
    groupUid: r.group_uid,
    identityUid: r.identity_uid,
    ...(r.role_uid === null ? {} : { roleUid: r.role_uid }),
    createTime: r.created_at,
    ...(r.last_used_at === null ? {} : { lastUsedTime: r.last_used_at }),
    ...(r.expire_time === null ? {} : { expireTime: r.expire_time }),
    ...(r.not_before === null ? {} : { notBefore: r.not_before }),
  };
}
