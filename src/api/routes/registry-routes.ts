import { REPO_LIST } from '../../resources/repos/repo.js';
import { repoCreateSchema, repoPatchSchema } from '../../resources/repos/repo-input.js';
import type { RepoService } from '../../resources/repos/repo-service.js';
import { TAG_LIST } from '../../resources/tags/tag.js';
import { tagPutSchema } from '../../resources/tags/tag-input.js';
import type { TagService } from '../../resources/tags/tag-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import {
  repoV1,
  repoV1Schema,
  repoV2,
  repoV2Schema,
  tagV2,
  tagV2Schema,
} from '../../wire/registry-wire.js';
import { mountV1, mountV2 } from './crud.js';

/**
 * Registry: repos (v2beta1 CRUD, v1 read-only list and get) and tags (v2beta1 list, get,
 * create-or-update on POST to the repo, delete; no PATCH, as on the platform).
 */
export function mountRegistryRoutes(
  t: RouteTarget,
  repos: RepoService,
  tags: TagService,
  bodyLimit: number,
): void {
  const path = '/registry/v2beta1/repos';
  mountV2(t, repos, {
    path,
    plural: 'repos',
    name: 'Repo',
    spec: REPO_LIST,
    wireSchema: repoV2Schema,
    toWire: repoV2,
    createSchema: repoCreateSchema,
    updateSchema: repoPatchSchema,
    examples: examplesFor(path),
    bodyLimit,
  });
  const v1 = '/registry/v1/repos';
  mountV1(
    t,
    { get: repos.get.bind(repos), list: repos.list.bind(repos) },
    {
      path: v1,
      name: 'Repo',
      spec: REPO_LIST,
      wireSchema: repoV1Schema,
      toWire: repoV1,
      examples: examplesFor(v1),
      bodyLimit,
    },
  );
  const tagsPath = '/registry/v2beta1/tags';
  mountV2(t, tags, {
    path: tagsPath,
    plural: 'tags',
    name: 'Tag',
    spec: TAG_LIST,
    wireSchema: tagV2Schema,
    toWire: tagV2,
    createSchema: tagPutSchema,
    parentKind: 'repo',
    examples: examplesFor(tagsPath),
    bodyLimit,
  });
}
