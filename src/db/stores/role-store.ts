import { whereNamePrefix } from '../name-prefix.js';
import type { Capability } from '../../auth/capabilities.js';
import { isCapability } from '../../auth/capabilities.js';
import { failedPrecondition, notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Role } from '../../resources/roles/role.js';
import type { NewRole, RoleStore } from '../../resources/roles/role-store.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation } from '../errors.js';
import { standardList, type StandardListSpec } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

interface RoleRow {
  uid: string;
  parent_uid: string | null;
  name: string;
  description: string;
  capabilities: string[];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'uid',
  'parent_uid',
  'name',
  'description',
  'capabilities',
  'created_at',
  'updated_at',
];

/** Capabilities the catalogue no longer knows are dropped: unknown grants nothing. */
export function storedCapabilities(raw: unknown): Capability[] {
  return Array.isArray(raw) ? raw.filter((c): c is Capability => isCapability(String(c))) : [];
}

function toRole(r: RoleRow): Role {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    description: r.description,
    capabilities: storedCapabilities(r.capabilities),
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

function inUse(uid: string) {
  return failedPrecondition('RESOURCE_IN_USE', 'cannot delete a role that is still bound', uid);
}

const LIST: StandardListSpec = {
  table: 'roles',
  sort: { name: 'name', created_at: 'created_at' },
  filters: {
    name: 'roles.name',
    name_prefix: (qb, v) => whereNamePrefix(qb, 'roles.name', v),
  },
  select: COLUMNS.map((c) => `roles.${c}`),
  alwaysVisible: (qb) => void qb.whereNull('roles.parent_uid'),
};

export class KnexRoleStore implements RoleStore {
  async get(tx: Tx, uid: string): Promise<Role | undefined> {
    const row = (await kx(tx)('roles').where({ uid }).first(COLUMNS)) as RoleRow | undefined;
    return row && toRole(row);
  }

  async insert(tx: Tx, r: NewRole): Promise<Role> {
    try {
      const [row] = (await kx(tx)('roles')
        .insert({
          uid: r.uid,
          parent_uid: r.parentUid,
          name: r.name,
          description: r.description,
          capabilities: JSON.stringify(r.capabilities),
        })
        .returning(COLUMNS)) as [RoleRow];
      return toRole(row);
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, r.parentUid);
      throw e;
    }
  }

  async update(
    tx: Tx,
    uid: string,
    patch: { name?: string; description?: string; capabilities?: readonly Capability[] },
  ): Promise<Role | undefined> {
    const k = kx(tx);
    const set: Record<string, unknown> = { updated_at: k.fn.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.capabilities !== undefined) set.capabilities = JSON.stringify(patch.capabilities);
    const [row] = (await k('roles')
      .where({ uid })
      .whereNotNull('parent_uid')
      .update(set)
      .returning(COLUMNS)) as RoleRow[];
    return row && toRole(row);
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    const k = kx(tx);
    // The row lock orders us against a binding being created for this role (its foreign
    // key check takes a share lock on the same row): either it lands first and is seen, or
    // it fails its foreign key after we are gone.
    const locked = await k('roles')
      .where({ uid })
      .whereNotNull('parent_uid')
      .forUpdate()
      .first('uid');
    if (!locked) return false;
    if (await k('role_bindings').where({ role_uid: uid }).first('uid')) throw inUse(uid);
    try {
      return (await k('roles').where({ uid }).del()) > 0;
    } catch (e) {
      if (isForeignKeyViolation(e)) throw inUse(uid);
      throw e;
    }
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<Role>> {
    const page = await standardList<RoleRow>(kx(tx), LIST, q);
    return { ...page, items: page.items.map(toRole) };
  }
}
