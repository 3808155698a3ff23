import type Router from '@koa/router';
import { ADVISORY_LIST } from '../../resources/advisories/advisory.js';
import type { AdvisoryService } from '../../resources/advisories/advisory-service.js';
import { advisoryV2 } from '../wire/advisory-wire.js';
import { mountV2 } from './crud.js';

/** Vulnerability advisories: List and Get only; they are written by `arbor import-advisories`. */
export function mountAdvisoryRoutes(
  router: Router,
  advisories: AdvisoryService,
  bodyLimit: number,
): void {
  mountV2(router, advisories, {
    path: '/vulnerabilities/v2beta1/advisories',
    plural: 'advisories',
    spec: ADVISORY_LIST,
    toWire: advisoryV2,
    bodyLimit,
  });
}
