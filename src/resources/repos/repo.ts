import type { UpdateSpec } from '../../core/field-mask.js';
import type { ListSpec } from '../../core/list-request.js';

/** A container-registry repository, hanging directly under a group. */
export interface Repo {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
  createTime: Date;
  updateTime: Date;
}

export const REPO_TYPE = 'registry.arbor.dev/Repo';

/** Repository names: lowercase path components of an OCI name, without `/`. */
export const REPO_NAME_PATTERN = /^[a-z0-9]+(?:[._-][a-z0-9]+)*$/;
export const REPO_NAME_MAX = 255;

export const REPO_LIST: ListSpec = {
  kind: 'repos',
  orderBy: ['uid', 'name', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string' },
};

export const REPO_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '' },
  outputOnly: ['uid', 'createTime', 'updateTime'],
};
