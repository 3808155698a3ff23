import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';

/** A group: an organization (root) or a folder below one. */
export interface Group {
  uid: string;
  parentUid: string | null;
  name: string;
  description: string;
  resourceLimits: Record<string, number>;
  verified: boolean;
  createTime: Date;
  updateTime: Date;
}

export const GROUP_TYPE = 'iam.arbor.dev/Group';

export const GROUP_LIST: ListSpec = {
  kind: 'groups',
  orderBy: ['uid', 'name', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string', name_prefix: 'prefix' },
};

export const GROUP_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '' },
  outputOnly: ['uid', 'createTime', 'updateTime', 'verified', 'resourceLimits'],
};
