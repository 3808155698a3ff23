import { repoCreateSchema, repoPatchSchema } from '../../resources/repos/repo-input.js';
import type { RepoService } from '../../resources/repos/repo-service.js';
import { tagPutSchema } from '../../resources/tags/tag-input.js';
import type { TagService } from '../../resources/tags/tag-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { REPO_KIND, TAG_KIND, repoV1, repoV1Schema } from '../../wire/registry-wire.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

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
  mountV2(t, repos, {
    ...v2Kind(REPO_KIND),
    createSchema: repoCreateSchema,
    updateSchema: repoPatchSchema,
    examples: examplesFor(REPO_KIND.path),
    bodyLimit,
  });
  const v1 = '/registry/v1/repos';
  mountV1(
    t,
    { get: repos.get.bind(repos), list: repos.list.bind(repos) },
    {
      path: v1,
      name: REPO_KIND.name,
      spec: REPO_KIND.spec,
      wireSchema: repoV1Schema,
      toWire: repoV1,
      examples: examplesFor(v1),
      bodyLimit,
    },
  );
  mountV2(t, tags, {
    ...v2Kind(TAG_KIND),
    createSchema: tagPutSchema,
    examples: examplesFor(TAG_KIND.path),
    bodyLimit,
  });
}
