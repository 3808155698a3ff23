import type Router from '@koa/router';
import { REPO_LIST } from '../../resources/repos/repo.js';
import type { RepoService } from '../../resources/repos/repo-service.js';
import { TAG_LIST } from '../../resources/tags/tag.js';
import type { TagService } from '../../resources/tags/tag-service.js';
import { repoV1, repoV2, tagV2 } from '../wire/registry-wire.js';
import { mountV1, mountV2 } from './crud.js';

/**
 * Registry: repos (v2beta1 CRUD, v1 read-only list and get) and tags (v2beta1 list, get,
 * create-or-update on POST to the repo, delete; no PATCH, as on the platform).
 */
export function mountRegistryRoutes(
  router: Router,
  repos: RepoService,
  tags: TagService,
  bodyLimit: number,
): void {
  mountV2(router, repos, {
    path: '/registry/v2beta1/repos',
    plural: 'repos',
    spec: REPO_LIST,
    toWire: repoV2,
    bodyLimit,
  });
  mountV1(
    router,
    { get: repos.get.bind(repos), list: repos.list.bind(repos) },
    { path: '/registry/v1/repos', spec: REPO_LIST, toWire: repoV1, bodyLimit },
  );
  mountV2(router, tags, {
    path: '/registry/v2beta1/tags',
    plural: 'tags',
    spec: TAG_LIST,
    toWire: tagV2,
    bodyLimit,
  });
}
