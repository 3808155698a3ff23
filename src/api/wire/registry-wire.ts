import type { Repo } from '../../resources/repos/repo.js';
import type { Tag } from '../../resources/tags/tag.js';
import { ts } from './time.js';

export function repoV2(r: Repo) {
  return {
    uid: r.uid,
    name: r.name,
    description: r.description,
    createTime: ts(r.createTime),
    updateTime: ts(r.updateTime),
  };
}

export function repoV1(r: Repo) {
  return {
    id: r.uid,
    name: r.name,
    description: r.description,
    createdAt: ts(r.createTime),
    updatedAt: ts(r.updateTime),
  };
}

/** The platform's Tag, plus `createTime`: the spec makes it common to every resource. */
export function tagV2(t: Tag) {
  return {
    uid: t.uid,
    name: t.name,
    digest: t.digest,
    deprecated: t.deprecated,
    createTime: ts(t.createTime),
    updateTime: ts(t.updateTime),
  };
}
