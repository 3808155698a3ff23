import { createHash } from 'node:crypto';
import { stableJson } from '../wire/manifest-spec.js';
import type { Manifest } from './plan-manifests.js';
import type { AccessDelta, Plan } from './plan-types.js';

/** What of an access delta a review saw: every change shown, the total and the warnings. */
function reviewed(a: AccessDelta | undefined): unknown {
  if (a === undefined) return null;
  if (a.unavailable !== undefined) return { unavailable: true, warnings: a.warnings };
  return { changes: a.changes, totalCount: a.totalCount, warnings: a.warnings };
}

/**
 * The plan token: a digest of the manifests, every change (each with the ETag of the
 * resource it writes), the ETag of every resource found in sync, the access-deciding part of
 * every role and identity the changes name, and the access delta as shown. Any write to one
 * of those resources changes its ETag; a role widened or an identity's claim match changed
 * changes its digest, though the plan's own writes are the same; any other change that
 * would alter the plan or what it grants (a resource of the same name appearing, a child to
 * prune, another binding of the same identity gone) alters the changes or the delta. So a
 * plan made again comes out with the same token exactly when applying the old one is still
 * what was reviewed.
 */
export function planToken(
  manifests: readonly Manifest[],
  plan: Pick<Plan, 'changes' | 'unchanged' | 'refs' | 'access'>,
): string {
  const text = stableJson({
    manifests,
    changes: plan.changes,
    unchanged: plan.unchanged,
    refs: plan.refs,
    access: reviewed(plan.access),
  });
  return createHash('sha256').update(text).digest('base64url').slice(0, 32);
}
