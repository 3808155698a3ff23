import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';

export interface AmazonAccount {
  account: string;
}

export interface GoogleProject {
  projectId?: string;
  projectNumber?: string;
}

export interface AzureTenant {
  tenantId: string;
  /** Arbor component → Azure client (application) id. */
  clientIds: Record<string, string>;
}

/**
 * The cloud accounts associated with one group. There is at most one per group and its
 * uid is the group's uid, so "the association of G" needs no lookup.
 */
export interface AccountAssociation {
  uid: string;
  /** The group's parent (null for an organization); see the 0003 migration. */
  parentUid: string | null;
  name: string;
  description: string;
  amazon: AmazonAccount | null;
  google: GoogleProject | null;
  azure: AzureTenant | null;
  createTime: Date;
  updateTime: Date;
}

export const ACCOUNT_ASSOCIATION_TYPE = 'iam.arbor.dev/AccountAssociation';

/**
 * The platform's default order is `group asc`; the uid is the group uid, so `group` and
 * `uid` are the same order and both are accepted. `group=<uid>` (v1's filter) selects one.
 */
export const ACCOUNT_ASSOCIATION_LIST: ListSpec = {
  kind: 'accountAssociations',
  orderBy: ['group', 'uid', 'name', 'created_at'],
  defaultOrder: { field: 'group', direction: 'asc' },
  filters: { name: 'string', group: 'uid' },
};

export const ACCOUNT_ASSOCIATION_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '', amazon: null, google: null, azure: null },
  outputOnly: ['uid', 'createTime', 'updateTime'],
};
