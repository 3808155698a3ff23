import { ADVISORY_LIST } from '../../resources/advisories/advisory.js';
import type { AdvisoryService } from '../../resources/advisories/advisory-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { advisoryV2, advisoryV2Schema } from '../../wire/advisory-wire.js';
import { mountV2 } from './crud.js';

/** Vulnerability advisories: List and Get only; they are written by `arbor import-advisories`. */
export function mountAdvisoryRoutes(
  t: RouteTarget,
  advisories: AdvisoryService,
  bodyLimit: number,
): void {
  const path = '/vulnerabilities/v2beta1/advisories';
  mountV2(t, advisories, {
    path,
    plural: 'advisories',
    name: 'Advisory',
    spec: ADVISORY_LIST,
    wireSchema: advisoryV2Schema,
    toWire: advisoryV2,
    examples: examplesFor(path),
    bodyLimit,
  });
}
