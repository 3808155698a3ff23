import { mountAdvisoryImportRoute } from '../api/routes/advisory-import-route.js';
import { mountAdvisoryRoutes } from '../api/routes/advisory-routes.js';
import { KnexAdvisoryStore } from '../db/stores/advisory-store.js';
import { AdvisoriesService } from '../gen/arbor/vulnerabilities/v2beta1/advisories_pb.js';
import { mountAdvisoryImport } from '../grpc/advisory-import.js';
import { mountCrud } from '../grpc/crud.js';
import { AdvisoryImporter } from '../resources/advisories/advisory-import.js';
import { AdvisoryService } from '../resources/advisories/advisory-service.js';
import { ADVISORY_KIND } from '../wire/advisory-wire.js';
import { defineFeature } from './feature.js';

/**
 * Vulnerability advisories: read (List and Get) through the API, written only by the OSV
 * import (`arbor import-advisories`, or its REST and gRPC calls). The reads and the import
 * share one store and one gRPC service, so the feature is keyed by its API:
 * `arbor.services.vulnerabilities.advisories` and `.advisoryImport`.
 */
export const advisoryFeature = defineFeature({
  key: 'vulnerabilities',
  kinds: [ADVISORY_KIND],
  grpcServices: [AdvisoriesService],
  create: (d) => {
    const store = new KnexAdvisoryStore();
    const advisories = new AdvisoryService({ ...d.common, advisories: store });
    const { uow, authz } = d.common;
    const advisoryImport = new AdvisoryImporter({ uow, authz, advisories: store });
    return {
      service: { advisories, advisoryImport },
      rest: (t, bodyLimit) => {
        mountAdvisoryRoutes(t, advisories, bodyLimit);
        mountAdvisoryImportRoute(t, advisoryImport);
      },
      grpc: (router, auth) => {
        mountCrud(router, auth, AdvisoriesService, advisories, ADVISORY_KIND);
        mountAdvisoryImport(router, auth, advisoryImport);
      },
    };
  },
});
