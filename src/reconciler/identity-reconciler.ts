import type { Principal } from '../auth/principal.js';
import { invalidField } from '../core/rpc-error.js';
import type { Identity } from '../resources/identities/identity.js';
import type { IdentityService } from '../resources/identities/identity-service.js';
import { changedFields, identityFields, identityFieldsOf } from '../wire/manifest-spec.js';
import { converge, type Observation, type KindReconciler, type RefResolver } from './kind-sync.js';
import type { ArborObject, IdentitySpec } from './resources.js';

/**
 * Identity custom resources ↔ Arbor identities under a group (`spec.groupRef` or
 * `spec.groupUid`). Only claim-match identities are managed from Kubernetes: static keys
 * carry key material that does not belong in a custom resource.
 */
export class IdentityReconciler implements KindReconciler<IdentitySpec> {
  readonly kind = 'Identity' as const;
  readonly table = 'identities' as const;

  constructor(private readonly identities: IdentityService) {}

  references(spec: IdentitySpec) {
    return spec.groupRef?.name ? [{ kind: 'Group' as const, name: spec.groupRef.name }] : [];
  }

  async sync(
    obj: ArborObject<IdentitySpec>,
    refs: RefResolver,
    p: Principal,
    observe?: Observation,
  ) {
    const spec = obj.spec ?? {};
    const { namespace, name } = obj.metadata;
    const groupUid = spec.groupRef?.name
      ? refs.uidOf('Group', namespace, spec.groupRef.name)
      : spec.groupUid || undefined;
    const want = identityFields(spec, name);
    const { claimMatch } = want;
    return converge<Identity>({
      uid: obj.status?.uid,
      adoptUid: spec.adoptUid,
      ...(observe ? { observe, createFields: want } : {}),
      get: (uid) => this.identities.get(p, uid),
      create: () => this.identities.create(p, groupUid, want),
      uidOf: (i) => i.uid,
      check: (i) => {
        if (i.parentUid === (groupUid ?? null)) return;
        throw invalidField(
          spec.groupRef ? 'spec.groupRef' : 'spec.groupUid',
          `identity ${i.uid} belongs to group ${i.parentUid ?? '(none)'}, and identities cannot move; ` +
            'delete this Identity and create a new one to change its group',
        );
      },
      diff: (i) => {
        const patch = changedFields(identityFieldsOf(i), want);
        // An adopted identity may use static keys; claimMatch replaces them, and the
        // service wants both named when switching.
        if (i.staticKeys) return { ...(patch ?? want), claimMatch, staticKeys: null };
        return patch;
      },
      update: (uid, patch) => this.identities.update(p, uid, patch, Object.keys(patch)),
    });
  }

  async remove(uid: string, p: Principal): Promise<void> {
    await this.identities.delete(p, uid);
  }
}
