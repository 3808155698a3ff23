import type { ListSpec } from '../../core/list-request.js';

/**
 * A tag of a registry repo: a name pointing at a manifest digest. Its uid hangs under
 * the repo's uid. Unlike the platform's Tag it shows createTime too (the spec lists uid,
 * createTime and updateTime as common to every resource).
 */
export interface Tag {
  uid: string;
  parentUid: string;
  name: string;
  digest: string;
  deprecated: boolean;
  createTime: Date;
  updateTime: Date;
}

export const TAG_TYPE = 'registry.arbor.dev/Tag';

/** OCI distribution tag grammar. */
export const TAG_NAME_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

export const TAG_LIST: ListSpec = {
  kind: 'tags',
  orderBy: ['uid', 'name', 'created_at', 'updated_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string', digest: 'string' },
};

/** Output-only fields a client may echo back in a body; they are ignored. */
export const TAG_OUTPUT_ONLY = ['uid', 'createTime', 'updateTime'] as const;
