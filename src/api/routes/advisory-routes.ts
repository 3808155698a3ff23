import type { AdvisoryService } from '../../resources/advisories/advisory-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { ADVISORY_KIND } from '../../wire/advisory-wire.js';
import { mountV2, v2Kind } from './crud.js';

/** Vulnerability advisories: List and Get only; they are written by `arbor import-advisories`. */
export function mountAdvisoryRoutes(
  t: RouteTarget,
  advisories: AdvisoryService,
  bodyLimit: number,
): void {
  mountV2(t, advisories, {
    ...v2Kind(ADVISORY_KIND),
    examples: examplesFor(ADVISORY_KIND.path),
    bodyLimit,
  });
}
