import { alreadyExists, notFound } from '../../core/rpc-error.js';
import { parentOf } from '../../core/uidp.js';
import {
  ACCOUNT_ASSOCIATION_TYPE,
  type AccountAssociation,
  type AmazonAccount,
  type AzureTenant,
  type GoogleProject,
} from '../../resources/account-associations/account-association.js';
import type {
  AccountAssociationFields,
  AccountAssociationStore,
} from '../../resources/account-associations/account-association-store.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation, isUniqueViolation } from '../errors.js';
import { standardList } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

interface AssociationRow {
  uid: string;
  parent_uid: string | null;
  name: string;
  description: string;
  amazon: AmazonAccount | null;
  google: GoogleProject | null;
  azure: AzureTenant | null;
  created_at: Date;
  updated_at: Date;
}

const T = 'account_associations';
const COLUMNS = [
  'uid',
  'parent_uid',
  'name',
  'description',
  'amazon',
  'google',
  'azure',
  'created_at',
  'updated_at',
].map((c) => `${T}.${c}`);

function toAssociation(r: AssociationRow): AccountAssociation {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    description: r.description,
    amazon: r.amazon,
    google: r.google,
    azure: r.azure,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

const json = (v: unknown) => (v === null ? null : JSON.stringify(v));

/** Column values of the given fields; jsonb goes in as JSON text (never as a pg array). */
function columns(f: Partial<AccountAssociationFields>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.name !== undefined) out.name = f.name;
  if (f.description !== undefined) out.description = f.description;
  if (f.amazon !== undefined) out.amazon = json(f.amazon);
  if (f.google !== undefined) out.google = json(f.google);
  if (f.azure !== undefined) out.azure = json(f.azure);
  return out;
}

/**
 * The row's uid is its group's uid and `parent_uid` is the group's parent, so
 * `standardList` needs no special case: `children_of=X` finds the associations of X's
 * direct children and `descendants_of=X` those of every group strictly below X.
 */
export class KnexAccountAssociationStore implements AccountAssociationStore {
  async get(tx: Tx, groupUid: string): Promise<AccountAssociation | undefined> {
    const row = (await kx(tx)(T).where({ uid: groupUid }).first(COLUMNS)) as
      AssociationRow | undefined;
    return row && toAssociation(row);
  }

  async insert(tx: Tx, groupUid: string, a: AccountAssociationFields): Promise<AccountAssociation> {
    try {
      const [row] = (await kx(tx)(T)
        .insert({ uid: groupUid, parent_uid: parentOf(groupUid) ?? null, ...columns(a) })
        .returning(COLUMNS)) as [AssociationRow];
      return toAssociation(row);
    } catch (e) {
      if (isUniqueViolation(e)) {
        throw alreadyExists(
          ACCOUNT_ASSOCIATION_TYPE,
          `group ${groupUid} already has an account association`,
        );
      }
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, groupUid);
      throw e;
    }
  }

  async update(
    tx: Tx,
    groupUid: string,
    patch: Partial<AccountAssociationFields>,
  ): Promise<AccountAssociation | undefined> {
    const k = kx(tx);
    const [row] = (await k(T)
      .where({ uid: groupUid })
      .update({ ...columns(patch), updated_at: k.fn.now() })
      .returning(COLUMNS)) as AssociationRow[];
    return row && toAssociation(row);
  }

  async delete(tx: Tx, groupUid: string): Promise<boolean> {
    return (await kx(tx)(T).where({ uid: groupUid }).del()) > 0;
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<AccountAssociation>> {
    const page = await standardList<AssociationRow>(
      kx(tx),
      {
        table: T,
        // `group` is the platform's name for this order; the uid is the group uid.
        sort: { group: 'uid', name: 'name', created_at: 'created_at' },
        filters: { name: `${T}.name`, group: `${T}.uid` },
        select: COLUMNS,
      },
      q,
    );
    return { ...page, items: page.items.map(toAssociation) };
  }
}
