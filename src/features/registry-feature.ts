import { mountRegistryRoutes } from '../api/routes/registry-routes.js';
import { KnexTagStore } from '../db/stores/tag-store.js';
import { ReposService } from '../gen/arbor/registry/v2beta1/repos_pb.js';
import { TagsService } from '../gen/arbor/registry/v2beta1/tags_pb.js';
import { mountCrud } from '../grpc/crud.js';
import { RepoService } from '../resources/repos/repo-service.js';
import { TagService } from '../resources/tags/tag-service.js';
import { REPO_KIND, TAG_KIND } from '../wire/registry-wire.js';
import { defineFeature } from './feature.js';

/**
 * The registry: a group's container repos and their tags, two kinds that live together (a
 * tag's parent is its repo), keyed by their API as `arbor.services.registry`. The registry's
 * token server and its notifications stay core (service-layer.ts) and reach the repos and
 * tags there; the repo store is shared (the token server reads it), the tag store is its own.
 */
export const registryFeature = defineFeature({
  key: 'registry',
  kinds: [REPO_KIND, TAG_KIND],
  grpcServices: [ReposService, TagsService],
  create: (d) => {
    const repos = new RepoService({ ...d.common, repos: d.stores.repos });
    const tags = new TagService({ ...d.common, tags: new KnexTagStore() });
    return {
      service: { repos, tags },
      rest: (t, bodyLimit) => mountRegistryRoutes(t, repos, tags, bodyLimit),
      grpc: (router, auth) => {
        mountCrud(router, auth, ReposService, repos, REPO_KIND);
        mountCrud(router, auth, TagsService, tags, TAG_KIND);
      },
    };
  },
});
