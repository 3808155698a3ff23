import type { Principal } from '../auth/principal.js';
import { Code } from '../core/rpc-code.js';
import { invalidField, isRpcError, permissionDenied } from '../core/rpc-error.js';
import type { Group } from '../resources/groups/group.js';
import type { GroupService } from '../resources/groups/group-service.js';
import { changedFields, groupFields } from '../wire/manifest-spec.js';
import { converge, type Observation, type KindReconciler, type RefResolver } from './kind-sync.js';
import type { ArborObject, GroupSpec } from './resources.js';

/**
 * Organizations are the administrator's (as in REST): a namespace that is refused one is
 * told what it can do instead.
 */
function orgHint(parentUid: string | undefined) {
  return (e: unknown): never => {
    if (parentUid !== undefined || !isRpcError(e) || e.code !== Code.PERMISSION_DENIED) throw e;
    throw permissionDenied(
      'only an Arbor administrator can create an organization; set spec.parentUid to a ' +
        "group this namespace's identity may create under, or spec.adoptUid to an " +
        'existing organization',
    );
  };
}

/**
 * Group custom resources ↔ Arbor groups. The parent is `spec.parentRef` (another Group
 * in the namespace), `spec.parentUid` (a group that exists only in Arbor), or neither (an
 * organization). Groups cannot move in Arbor, so a parent that no longer matches is an
 * invalid spec rather than something to "fix" by deleting and recreating a subtree.
 */
export class GroupReconciler implements KindReconciler<GroupSpec> {
  readonly kind = 'Group' as const;
  readonly table = 'groups' as const;

  constructor(private readonly groups: GroupService) {}

  references(spec: GroupSpec) {
    return spec.parentRef?.name ? [{ kind: 'Group' as const, name: spec.parentRef.name }] : [];
  }

  async sync(obj: ArborObject<GroupSpec>, refs: RefResolver, p: Principal, observe?: Observation) {
    const spec = obj.spec ?? {};
    const { namespace, name } = obj.metadata;
    const parentUid = spec.parentRef?.name
      ? refs.uidOf('Group', namespace, spec.parentRef.name)
      : spec.parentUid || undefined;
    const want = groupFields(spec, name);
    return converge<Group>({
      uid: obj.status?.uid,
      adoptUid: spec.adoptUid,
      ...(observe ? { observe, createFields: want } : {}),
      get: (uid) => this.groups.get(p, uid),
      create: () => this.groups.create(p, parentUid, want).catch(orgHint(parentUid)),
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

  async remove(uid: string, p: Principal): Promise<void> {
    await this.groups.delete(p, uid);
  }
}
