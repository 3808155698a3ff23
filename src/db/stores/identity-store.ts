import { whereNamePrefix } from '../name-prefix.js';
import type { Grant } from '../../auth/authorizer.js';
import { notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { ClaimMatch, Identity, StaticKeys } from '../../resources/identities/identity.js';
import type {
  IdentityChanges,
  IdentityStore,
  NewIdentity,
} from '../../resources/identities/identity-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation } from '../errors.js';
import { standardList, type StandardListSpec } from '../standard-list.js';
import { Statement } from '../prepared.js';
import { kx } from '../unit-of-work.js';
import { grantsOfIdentity } from './grant-source.js';

/** `static_keys` as stored: the expiry is an ISO string inside the jsonb. */
type StoredStaticKeys = Omit<StaticKeys, 'expirationTime'> & { expirationTime: string };

interface IdentityRow {
  uid: string;
  parent_uid: string | null;
  name: string;
  description: string;
  claim_match: ClaimMatch | null;
  static_keys: StoredStaticKeys | null;
  sign_in_provider: string | null;
  last_seen_at: Date;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'uid',
  'parent_uid',
  'name',
  'description',
  'claim_match',
  'static_keys',
  'sign_in_provider',
  'last_seen_at',
  'created_at',
  'updated_at',
];

function toIdentity(r: IdentityRow): Identity {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    description: r.description,
    ...(r.claim_match ? { claimMatch: r.claim_match } : {}),
    ...(r.static_keys
      ? { staticKeys: { ...r.static_keys, expirationTime: new Date(r.static_keys.expirationTime) } }
      : {}),
    ...(r.sign_in_provider === null ? {} : { signInProvider: r.sign_in_provider }),
    lastSeenTime: r.last_seen_at,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

/** jsonb parameters are sent as JSON text: a JS array or object would not be. */
function json(v: ClaimMatch | StaticKeys | null): string | null {
  if (v === null) return null;
  if ('expirationTime' in v) {
    return JSON.stringify({ ...v, expirationTime: v.expirationTime.toISOString() });
  }
  return JSON.stringify(v);
}

const LIST: StandardListSpec = {
  table: 'identities',
  sort: { name: 'name', created_at: 'created_at' },
  filters: {
    name: 'identities.name',
    name_prefix: (qb, v) => whereNamePrefix(qb, 'identities.name', v),
  },
  select: COLUMNS.map((c) => `identities.${c}`),
};

/** The STS reads the identity on every exchange: a fixed, prepared statement. */
const GET = new Statement(`SELECT ${COLUMNS.join(', ')} FROM identities WHERE uid = $1`);
const GET_FOR_UPDATE = new Statement(`${GET.text} FOR UPDATE`);
/**
 * Matches no row (and writes nothing) unless the recorded time is due, or the identity has
 * never been seen (its lastSeenTime is still its createTime); never moves backwards.
 */
const TOUCH = new Statement(
  `UPDATE identities SET last_seen_at = $1
    WHERE uid = $2 AND last_seen_at < $3 AND (last_seen_at < $4 OR last_seen_at = created_at)`,
);

export class KnexIdentityStore implements IdentityStore {
  async get(tx: Tx, uid: string, forUpdate = false): Promise<Identity | undefined> {
    const [row] = await (forUpdate ? GET_FOR_UPDATE : GET).rows<IdentityRow>(kx(tx), [uid]);
    return row && toIdentity(row);
  }

  async insert(tx: Tx, i: NewIdentity): Promise<Identity> {
    try {
      const [row] = (await kx(tx)('identities')
        .insert({
          uid: i.uid,
          parent_uid: i.parentUid,
          name: i.name,
          description: i.description,
          claim_match: json(i.claimMatch),
          static_keys: json(i.staticKeys),
          last_seen_at: i.createTime,
          created_at: i.createTime,
          updated_at: i.createTime,
        })
        .returning(COLUMNS)) as [IdentityRow];
      return toIdentity(row);
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, i.parentUid);
      throw e;
    }
  }

  async update(tx: Tx, uid: string, c: IdentityChanges): Promise<Identity | undefined> {
    const k = kx(tx);
    // created_at comes from the service's clock; never let updateTime precede it.
    const set: Record<string, unknown> = { updated_at: k.raw('greatest(now(), created_at)') };
    if (c.name !== undefined) set.name = c.name;
    if (c.description !== undefined) set.description = c.description;
    if (c.claimMatch !== undefined) set.claim_match = json(c.claimMatch);
    if (c.staticKeys !== undefined) set.static_keys = json(c.staticKeys);
    const [row] = (await k('identities')
      .where({ uid })
      .update(set)
      .returning(COLUMNS)) as IdentityRow[];
    return row && toIdentity(row);
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    return (await kx(tx)('identities').where({ uid }).del()) > 0;
  }

  async touchLastSeen(tx: Tx, uid: string, time: Date, dueBefore = time): Promise<void> {
    await TOUCH.rows(kx(tx), [time, uid, time, dueBefore < time ? dueBefore : time]);
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<Identity>> {
    const page = await standardList<IdentityRow>(kx(tx), LIST, q);
    return { ...page, items: page.items.map(toIdentity) };
  }

  grantsOf(tx: Tx, uid: string): Promise<Grant[]> {
    return grantsOfIdentity(tx, uid);
  }
}
