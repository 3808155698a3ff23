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
  filters: { name: 'string', name_prefix: 'prefix', top_level: 'boolean' },
  filterNotes: {
    top_level:
      '`true`: only the topmost groups the caller may list, those whose parent it may not ' +
      'list (for the admin token, the organizations); `false`: only the others.',
  },
};

export const GROUP_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '' },
  outputOnly: ['uid', 'createTime', 'updateTime', 'verified', 'resourceLimits'],
};
