import type { Capability } from '../../auth/capabilities.js';
import { isSelfOrBelow } from '../../core/uidp.js';
import { placementViolations } from '../role-bindings/role-binding-input.js';
import { isBuiltInRole } from '../reference-visibility.js';
import type { WorldBinding } from './access-delta.js';
import type { AccessChange } from './simulate.js';
import type { RoleFacts } from './simulation-store.js';

/** What the snapshot held of everything the change set names. */
export interface WorldFacts {
  groups: ReadonlySet<string>;
  identities: ReadonlySet<string>;
  roles: ReadonlyMap<string, RoleFacts>;
  /** Every binding of every identity the change set may touch, by uid. */
  bindings: readonly WorldBinding[];
}

/** What the caller may see, decided once from its grants (as `Authorizer.can` would). */
export interface Sight {
  group(uid: string): boolean;
  identity(uid: string): boolean;
  role(uid: string): boolean;
  binding(uid: string): boolean;
}

/** Why a change does not count: it names something missing or hidden (alike), or misplaced. */
export type Applied = { applied: true } | { applied: false; reason: string };

const ok: Applied = { applied: true };
const no = (reason: string): Applied => ({ applied: false, reason });

/**
 * The world a change set leaves, built change by change from the snapshot's facts: each
 * change applies to what the ones before it left (an identity deleted earlier cannot be
 * bound later). Nothing here reads or writes the database.
 */
export class SimulatedWorld {
  readonly #bindings = new Map<string, WorldBinding>();
  readonly #goneGroups: string[] = [];
  readonly #goneIdentities = new Set<string>();
  readonly #roleCaps = new Map<string, readonly Capability[]>();

  constructor(
    private readonly facts: WorldFacts,
    private readonly sight: Sight,
  ) {
    for (const b of facts.bindings) this.#bindings.set(b.uid!, b);
  }

  /** The bindings as they are now. */
  bindings(): WorldBinding[] {
    return [...this.#bindings.values()];
  }

  /** A role's capabilities at this point of the set (undefined: missing). */
  roleCapabilities(uid: string): readonly Capability[] | undefined {
    return this.#roleCaps.get(uid) ?? this.facts.roles.get(uid)?.capabilities;
  }

  private gone(uid: string): boolean {
    return this.#goneGroups.some((g) => isSelfOrBelow(g, uid));
  }

  private groupHere(uid: string): boolean {
    return this.facts.groups.has(uid) && !this.gone(uid) && this.sight.group(uid);
  }

  private identityHere(uid: string): boolean {
    return (
      this.facts.identities.has(uid) &&
      !this.#goneIdentities.has(uid) &&
      !this.gone(uid) &&
      this.sight.identity(uid)
    );
  }

  private roleHere(uid: string): boolean {
    return this.facts.roles.has(uid) && !this.gone(uid) && this.sight.role(uid);
  }

  /** Apply change `index`; what does not apply leaves the world as it was. */
  apply(c: AccessChange, index: number): Applied {
    if ('createRoleBinding' in c) return this.create(c.createRoleBinding, index);
    if ('deleteRoleBinding' in c) {
      const uid = c.deleteRoleBinding.uid;
      const b = this.#bindings.get(uid);
      if (b === undefined || !this.sight.binding(uid)) return no('role binding not found');
      this.#bindings.delete(uid);
      return ok;
    }
    if ('updateRole' in c) {
      const { uid, capabilities } = c.updateRole;
      if (!this.roleHere(uid)) return no('role not found');
      if (isBuiltInRole(uid)) return no('a built-in role cannot be updated');
      this.#roleCaps.set(uid, capabilities);
      for (const [k, b] of this.#bindings)
        if (b.role.uid === uid) this.#bindings.set(k, { ...b, capabilities });
      return ok;
    }
    if ('deleteIdentity' in c) {
      const uid = c.deleteIdentity.uid;
      if (!this.identityHere(uid)) return no('identity not found');
      this.#goneIdentities.add(uid);
      for (const [k, b] of this.#bindings) if (b.identityUid === uid) this.#bindings.delete(k);
      return ok;
    }
    const uid = c.deleteGroup.uid;
    if (!this.groupHere(uid)) return no('group not found');
    this.#goneGroups.push(uid);
    // Everything below goes: bindings there, and identities there with all their bindings.
    for (const [k, b] of this.#bindings)
      if (isSelfOrBelow(uid, b.groupUid) || isSelfOrBelow(uid, b.identityUid))
        this.#bindings.delete(k);
    return ok;
  }

  private create(
    c: Extract<AccessChange, { createRoleBinding: unknown }>['createRoleBinding'],
    index: number,
  ): Applied {
    const placement = placementViolations(c.groupUid, c.identityUid, c.roleUid);
    if (placement.length > 0) return no(placement.map((v) => v.description).join('; '));
    if (!this.groupHere(c.groupUid)) return no('group not found');
    if (!this.identityHere(c.identityUid)) return no('identity not found');
    const caps = this.roleHere(c.roleUid) ? this.roleCapabilities(c.roleUid) : undefined;
    if (caps === undefined) return no('role not found');
    this.#bindings.set(`#${index}`, {
      changeIndex: index,
      groupUid: c.groupUid,
      identityUid: c.identityUid,
      role: this.facts.roles.get(c.roleUid)!.ref,
      capabilities: caps,
      ...(c.expireTime === undefined ? {} : { expiresAt: c.expireTime.getTime() }),
      ...(c.notBefore === undefined ? {} : { startsAt: c.notBefore.getTime() }),
    });
    return ok;
  }
}
