import type { Capability } from '../../auth/capabilities.js';
import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';

/** A named set of capabilities: built-in (root level, immutable) or defined under a group. */
export interface Role {
  uid: string;
  /** The group that defines the role; null for built-ins. */
  parentUid: string | null;
  name: string;
  description: string;
  /** Deduplicated, in catalogue order. */
  capabilities: Capability[];
  createTime: Date;
  updateTime: Date;
}

export const ROLE_TYPE = 'iam.arbor.dev/Role';

export const ROLE_LIST: ListSpec = {
  kind: 'roles',
  orderBy: ['uid', 'name', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string', name_prefix: 'prefix' },
};

export const ROLE_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '', capabilities: [] },
  outputOnly: ['uid', 'createTime', 'updateTime'],
};

/** A role as other resources show it (a hydrated reference). */
export interface RoleRef {
  uid: string;
  name: string;
  description: string;
}
