import { z } from 'zod';
import { REPO_LIST, REPO_TYPE, REPO_UPDATE, type Repo } from '../resources/repos/repo.js';
import { TAG_LIST, TAG_OUTPUT_ONLY, TAG_TYPE, type Tag } from '../resources/tags/tag.js';
import { kind } from './kinds.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

export const repoV2Schema = z
  .object({
    uid: uidSchema,
    name: z.string(),
    description: z.string(),
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'A container-registry repository of a group.' });
export type RepoV2 = z.infer<typeof repoV2Schema>;

export const repoV1Schema = z.object({
  id: uidSchema,
  name: z.string(),
  description: z.string(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type RepoV1 = z.infer<typeof repoV1Schema>;

export const tagV2Schema = z
  .object({
    uid: uidSchema,
    name: z.string(),
    digest: z.string(),
    deprecated: z.boolean(),
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'A tag of a repo: a name pointing at a manifest digest.' });
export type TagV2 = z.infer<typeof tagV2Schema>;

export function repoV2(r: Repo): RepoV2 {
  return {
    uid: r.uid,
    name: r.name,
    description: r.description,
    createTime: ts(r.createTime),
    updateTime: ts(r.updateTime),
  };
}

export function repoV1(r: Repo): RepoV1 {
  return {
    id: r.uid,
    name: r.name,
    description: r.description,
    createdAt: ts(r.createTime),
    updatedAt: ts(r.updateTime),
  };
}

/** The platform's Tag, plus `createTime`: the spec makes it common to every resource. */
export function tagV2(t: Tag): TagV2 {
  return {
    uid: t.uid,
    name: t.name,
    digest: t.digest,
    deprecated: t.deprecated,
    createTime: ts(t.createTime),
    updateTime: ts(t.updateTime),
  };
}

/** The repo kind's descriptor (wire/kinds.ts), read by its REST and gRPC mounts and the presenter. */
export const REPO_KIND = kind({
  type: REPO_TYPE,
  name: 'Repo',
  plural: 'repos',
  path: '/registry/v2beta1/repos',
  spec: REPO_LIST,
  wireSchema: repoV2Schema,
  toWire: repoV2,
  outputOnly: REPO_UPDATE.outputOnly,
});

/** The tag kind's descriptor: a tag's parent is its repo. */
export const TAG_KIND = kind({
  type: TAG_TYPE,
  name: 'Tag',
  plural: 'tags',
  path: '/registry/v2beta1/tags',
  spec: TAG_LIST,
  wireSchema: tagV2Schema,
  toWire: tagV2,
  parentKind: 'repo',
  outputOnly: TAG_OUTPUT_ONLY,
});
