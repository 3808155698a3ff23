import type { Knex } from 'knex';
import { alreadyExists, invalidField, notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import { ROLE_BINDING_TYPE, type RoleBinding } from '../../resources/role-bindings/role-binding.js';
import type {
  BindingRefs,
  BoundWithin,
  NewRoleBinding,
  RoleBindingStore,
} from '../../resources/role-bindings/role-binding-store.js';
import type { Tx } from '../../resources/tx.js';
import type { Condition } from '../../auth/condition.js';
import { constraintOf, isForeignKeyViolation, isUniqueViolation } from '../errors.js';
import { whereVisible } from '../keyset.js';
import { standardList, type StandardListSpec } from '../standard-list.js';
import { kx } from '../unit-of-work.js';
import { storedCapabilities } from './role-store.js';

interface BindingRow {
  uid: string;
  parent_uid: string;
  created_at: Date;
  updated_at: Date;
  identity_uid: string;
  identity_name: string;
  identity_description: string;
  identity_subject: string;
  identity_issuer: string;
  group_name: string;
  group_description: string;
  role_uid: string;
  role_name: string;
  role_description: string;
  expire_time: Date | null;
  not_before: Date | null;
  condition: Condition | null;
}

const COLUMNS = [
  'role_bindings.uid',
  'role_bindings.parent_uid',
  'role_bindings.created_at',
  'role_bindings.updated_at',
  'role_bindings.identity_uid',
  'i.name as identity_name',
  'i.description as identity_description',
  'g.name as group_name',
  'g.description as group_description',
  'role_bindings.role_uid',
  'r.name as role_name',
  'r.description as role_description',
  'role_bindings.expire_time',
  'role_bindings.not_before',
  'role_bindings.condition',
];

/** The hydration: three joins and the claim fields, one query for one row or a page. */
function hydrate(qb: Knex.QueryBuilder): void {
  const field = (f: string) =>
    `coalesce(i.claim_match->>'${f}', i.claim_match->>'${f}Pattern', i.static_keys->>'${f}', '')`;
  void qb
    .join('identities as i', 'i.uid', 'role_bindings.identity_uid')
    .join('groups as g', 'g.uid', 'role_bindings.parent_uid')
    .join('roles as r', 'r.uid', 'role_bindings.role_uid')
    .select(
      qb.client.raw(`${field('subject')} as identity_subject`),
      qb.client.raw(`${field('issuer')} as identity_issuer`),
    );
}

function toBinding(r: BindingRow): RoleBinding {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    identity: {
      uid: r.identity_uid,
      name: r.identity_name,
      description: r.identity_description,
      subject: r.identity_subject,
      issuer: r.identity_issuer,
    },
    group: { uid: r.parent_uid, name: r.group_name, description: r.group_description },
    role: { uid: r.role_uid, name: r.role_name, description: r.role_description },
    createTime: r.created_at,
    updateTime: r.updated_at,
    ...(r.expire_time ? { expireTime: r.expire_time } : {}),
    ...(r.not_before ? { notBefore: r.not_before } : {}),
    ...(r.condition ? { condition: r.condition } : {}),
  };
}

/** SQLSTATE → what the caller got wrong, for writes that lost a race with a delete. */
function translateWrite(e: unknown, groupUid: string): unknown {
  if (isUniqueViolation(e)) {
    return alreadyExists(ROLE_BINDING_TYPE, 'the identity already holds this role at this group');
  }
  if (isForeignKeyViolation(e)) {
    const c = constraintOf(e);
    if (c === 'role_bindings_identity_fk') return invalidField('identityUid', 'identity not found');
    if (c === 'role_bindings_role_fk') return invalidField('roleUid', 'role not found');
    return notFound(GROUP_TYPE, groupUid);
  }
  return e;
}

const LIST: StandardListSpec = {
  table: 'role_bindings',
  sort: { created_at: 'created_at' },
  filters: {
    identity: 'role_bindings.identity_uid',
    group: 'role_bindings.parent_uid',
    role: 'role_bindings.role_uid',
  },
  select: COLUMNS,
  extend: hydrate,
};

export class KnexRoleBindingStore implements RoleBindingStore {
  async refs(
    tx: Tx,
    groupUid: string,
    identityUid: string,
    roleUid: string,
    bound?: BoundWithin,
  ): Promise<BindingRefs> {
    const k = kx(tx);
    const boundSql =
      bound === undefined
        ? k.raw('false')
        : k.raw('EXISTS (?)', [
            whereVisible(
              whereVisible(
                k('role_bindings as rb').select(k.raw('1')).where('rb.identity_uid', identityUid),
                'rb.parent_uid',
                bound.at,
              ),
              'rb.uid',
              bound.seen,
            ),
          ]);
    const res = (await k.raw(
      `SELECT EXISTS (SELECT 1 FROM groups WHERE uid = ?) AS group_exists,
              EXISTS (SELECT 1 FROM identities WHERE uid = ?) AS identity_exists,
              (SELECT capabilities FROM roles WHERE uid = ?) AS role_capabilities,
              ? AS identity_bound`,
      [groupUid, identityUid, roleUid, boundSql],
    )) as {
      rows: Array<{
        group_exists: boolean;
        identity_exists: boolean;
        role_capabilities: unknown;
        identity_bound: boolean;
      }>;
    };
    const row = res.rows[0];
    return {
      groupExists: row?.group_exists === true,
      identityExists: row?.identity_exists === true,
      roleCapabilities:
        row?.role_capabilities == null ? undefined : storedCapabilities(row.role_capabilities),
      identityBound: row?.identity_exists === true && row.identity_bound === true,
    };
  }

  async get(tx: Tx, uid: string): Promise<RoleBinding | undefined> {
    const qb = kx(tx)('role_bindings').where('role_bindings.uid', uid);
    hydrate(qb);
    const row = (await qb.first(COLUMNS)) as BindingRow | undefined;
    return row && toBinding(row);
  }

  async insert(tx: Tx, b: NewRoleBinding): Promise<RoleBinding> {
    try {
      await kx(tx)('role_bindings').insert({
        uid: b.uid,
        parent_uid: b.parentUid,
        identity_uid: b.identityUid,
        role_uid: b.roleUid,
        expire_time: b.expireTime ?? null,
        not_before: b.notBefore ?? null,
        condition: b.condition === undefined ? null : JSON.stringify(b.condition),
      });
    } catch (e) {
      throw translateWrite(e, b.parentUid);
    }
    return (await this.get(tx, b.uid)) as RoleBinding;
  }

  async update(
    tx: Tx,
    uid: string,
    refs: { identityUid: string; roleUid: string; expireTime?: Date },
  ): Promise<RoleBinding | undefined> {
    const k = kx(tx);
    let n: number;
    try {
      n = await k('role_bindings')
        .where({ uid })
        .update({
          identity_uid: refs.identityUid,
          role_uid: refs.roleUid,
          ...(refs.expireTime === undefined ? {} : { expire_time: refs.expireTime }),
          updated_at: k.fn.now(),
        });
    } catch (e) {
      throw translateWrite(e, uid);
    }
    return n > 0 ? this.get(tx, uid) : undefined;
  }

  async deleteAll(tx: Tx, uids: readonly string[]): Promise<string[]> {
    if (uids.length === 0) return [];
    const rows = (await kx(tx)('role_bindings')
      .whereIn('uid', uids)
      .del()
      .returning('uid')) as Array<{ uid: string }>;
    return rows.map((r) => r.uid);
  }

  async ofIdentity(tx: Tx, identityUid: string): Promise<RoleBinding[]> {
    const qb = kx(tx)('role_bindings')
      .where('role_bindings.identity_uid', identityUid)
      .orderBy('role_bindings.uid')
      .forUpdate('role_bindings');
    hydrate(qb);
    return ((await qb.select(COLUMNS)) as BindingRow[]).map(toBinding);
  }

  async expiredBefore(tx: Tx, cutoff: Date, limit: number): Promise<RoleBinding[]> {
    const qb = kx(tx)('role_bindings')
      .where('role_bindings.expire_time', '<', cutoff)
      .orderBy([
        { column: 'role_bindings.expire_time', order: 'asc' },
        { column: 'role_bindings.uid', order: 'asc' },
      ])
      .limit(limit)
      .forUpdate('role_bindings')
      .skipLocked();
    hydrate(qb);
    return ((await qb.select(COLUMNS)) as BindingRow[]).map(toBinding);
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<RoleBinding>> {
    const page = await standardList<BindingRow>(kx(tx), LIST, q);
    return { ...page, items: page.items.map(toBinding) };
  }
}
