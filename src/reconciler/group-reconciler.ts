import type { Principal } from '../auth/principal.js';
import { invalidField } from '../core/rpc-error.js';
import type { Group } from '../resources/groups/group.js';
import type { GroupService } from '../resources/groups/group-service.js';
import { changedFields, converge, type KindReconciler, type RefResolver } from './kind-sync.js';
import type { ArborObject, GroupSpec } from './resources.js';

/**
 * Group custom resources ↔ Arbor groups. The parent is `spec.parentRef` (another Group
 * in the namespace), `spec.parentUid` (a group that exists only in Arbor), or neither (an
 * organization). Groups cannot move in Arbor, so a parent that no longer matches is an
 * invalid spec rather than something to "fix" by deleting and recreating a subtree.
 */
export class GroupReconciler implements KindReconciler<GroupSpec> {
  readonly kind = 'Group' as const;

  constructor(
    private readonly groups: GroupService,
    private readonly principal: Principal,
  ) {}

  references(spec: GroupSpec) {
    return spec.parentRef?.name ? [{ kind: 'Group' as const, name: spec.parentRef.name }] : [];
  }

  async sync(obj: ArborObject<GroupSpec>, refs: RefResolver) {
    const spec = obj.spec ?? {};
    const { namespace, name } = obj.metadata;
    const parentUid = spec.parentRef?.name
      ? refs.uidOf('Group', namespace, spec.parentRef.name)
      : spec.parentUid || undefined;
    const want = { name: spec.name ?? name, description: spec.description ?? '' };
    const p = this.principal;
    return converge<Group>({
      uid: obj.status?.uid,
      adoptUid: spec.adoptUid,
      get: (uid) => this.groups.get(p, uid),
      create: () => this.groups.create(p, parentUid, want),
      uidOf: (g) => g.uid,
      check: (g) => {
        if ((g.parentUid ?? undefined) === parentUid) return;
        const field = spec.parentRef ? 'spec.parentRef' : 'spec.parentUid';
        const have = g.parentUid === null ? 'none (it is an organization)' : g.parentUid;
        throw invalidField(
          field,
          `group ${g.uid} has parent ${have}, and groups cannot move; ` +
            'delete this Group and create a new one to change its parent',
        );
      },
      diff: (g) => changedFields({ name: g.name, description: g.description }, want),
      update: (uid, patch) => this.groups.update(p, uid, patch, Object.keys(patch)),
    });
  }

  async remove(uid: string): Promise<void> {
    await this.groups.delete(this.principal, uid);
  }
}
