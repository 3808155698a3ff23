import { z } from 'zod';
import type { Repo } from '../resources/repos/repo.js';
import type { Tag } from '../resources/tags/tag.js';
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
