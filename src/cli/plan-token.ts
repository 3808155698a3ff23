import { createHash } from 'node:crypto';
import { stableJson } from '../wire/manifest-spec.js';
import type { Manifest } from './plan-manifests.js';
import type { Plan } from './plan-types.js';

/**
 * The plan token: a digest of the manifests, every change (each with the ETag of the
 * resource it writes) and the ETag of every resource found in sync. Any write to one of
 * those resources changes its ETag, and any other change that would alter the plan (a
 * resource of the same name appearing, a child to prune) alters the changes; so a plan made
 * again comes out with the same token exactly when applying the old one is still right.
 */
export function planToken(
  manifests: readonly Manifest[],
  plan: Pick<Plan, 'changes' | 'unchanged'>,
): string {
  const text = stableJson({ manifests, changes: plan.changes, unchanged: plan.unchanged });
  return createHash('sha256').update(text).digest('base64url').slice(0, 32);
}
