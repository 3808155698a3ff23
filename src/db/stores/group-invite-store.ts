import type { Knex } from 'knex';
import { notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { GroupInvite } from '../../resources/group-invites/group-invite.js';
import type {
  GroupInviteStore,
  NewGroupInvite,
  RedeemableInvite,
} from '../../resources/group-invites/group-invite-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation } from '../errors.js';
import { standardList } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

interface InviteRow {
  uid: string;
  parent_uid: string;
  role_uid: string;
  role_name: string | null;
  role_description: string | null;
  email: string | null;
  single_use: boolean;
  expires_at: Date;
  used_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const T = 'group_invites';
/** The invite's columns and its role's, hydrated in the same query (never `code_hash`). */
const COLUMNS = [
  ...[
    'uid',
    'parent_uid',
    'role_uid',
    'email',
    'single_use',
    'expires_at',
    'used_at',
    'created_at',
    'updated_at',
  ].map((c) => `${T}.${c}`),
  'roles.name as role_name',
  'roles.description as role_description',
];

function withRole(qb: Knex.QueryBuilder): Knex.QueryBuilder {
  return qb.leftJoin('roles', 'roles.uid', `${T}.role_uid`);
}

function toInvite(r: InviteRow): GroupInvite {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    roleUid: r.role_uid,
    role:
      r.role_name === null
        ? null
        : { uid: r.role_uid, name: r.role_name, description: r.role_description ?? '' },
    email: r.email,
    singleUse: r.single_use,
    expirationTime: r.expires_at,
    usedTime: r.used_at,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

export class KnexGroupInviteStore implements GroupInviteStore {
  async get(tx: Tx, uid: string): Promise<GroupInvite | undefined> {
    const row = (await withRole(kx(tx)(T)).where(`${T}.uid`, uid).first(COLUMNS)) as
      InviteRow | undefined;
    return row && toInvite(row);
  }

  async insert(tx: Tx, i: NewGroupInvite): Promise<GroupInvite> {
    const k = kx(tx);
    try {
      await k(T).insert({
        uid: i.uid,
        parent_uid: i.parentUid,
        role_uid: i.roleUid,
        email: i.email,
        single_use: i.singleUse,
        code_hash: i.codeHash,
        expires_at: k.raw(`now() + make_interval(secs => ?::double precision)`, [i.ttlMs / 1000]),
      });
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, i.parentUid);
      throw e;
    }
    return (await this.get(tx, i.uid)) as GroupInvite;
  }

  async lockForRedeem(tx: Tx, uid: string): Promise<RedeemableInvite | undefined> {
    const k = kx(tx);
    const row = (await withRole(k(T))
      .where(`${T}.uid`, uid)
      .forUpdate(T)
      .first([...COLUMNS, `${T}.code_hash`, k.raw(`(${T}.expires_at <= now()) AS expired`)])) as
      (InviteRow & { code_hash: Buffer | Uint8Array; expired: boolean }) | undefined;
    if (!row) return undefined;
    return { ...toInvite(row), codeHash: Buffer.from(row.code_hash), expired: row.expired };
  }

  async markUsed(tx: Tx, uid: string): Promise<void> {
    const k = kx(tx);
    await k(T).where({ uid }).update({ used_at: k.fn.now(), updated_at: k.fn.now() });
  }

  async update(
    tx: Tx,
    uid: string,
    patch: { roleUid?: string; expirationTime?: Date },
  ): Promise<GroupInvite | undefined> {
    const k = kx(tx);
    const n = await k(T)
      .where({ uid })
      .update({
        ...(patch.roleUid === undefined ? {} : { role_uid: patch.roleUid }),
        ...(patch.expirationTime === undefined ? {} : { expires_at: patch.expirationTime }),
        updated_at: k.fn.now(),
      });
    return n > 0 ? this.get(tx, uid) : undefined;
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    return (await kx(tx)(T).where({ uid }).del()) > 0;
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<GroupInvite>> {
    const page = await standardList<InviteRow>(
      kx(tx),
      {
        table: T,
        sort: { created_at: 'created_at' },
        filters: { group: `${T}.parent_uid` },
        select: COLUMNS,
        extend: (qb) => void withRole(qb),
      },
      q,
    );
    return { ...page, items: page.items.map(toInvite) };
  }
}
