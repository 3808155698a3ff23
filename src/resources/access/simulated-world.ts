import type { Capability } from '../../auth/capabilities.js';
import { isSelfOrBelow } from '../../core/uidp.js';
import { placementViolations } from '../role-bindings/role-binding-input.js';
import { isBuiltInRole } from '../reference-visibility.js';
import type { WorldBinding } from './access-delta.js';
import type { AccessChange } from './simulate.js';
import type { GroupFacts, PolicyFacts, RoleFacts } from './simulation-store.js';
import { grantWindow } from './access-store.js';
import {
  DEFAULT_DELEGATION_LIFETIME_S,
  MAX_DELEGATION_LIFETIME_S,
} from '../delegation/delegation-policy.js';

/** What the snapshot held of everything the change set names that the caller may see. */
export interface WorldFacts {
  groups: ReadonlyMap<string, GroupFacts>;
  /** The identities touched, by uid, with their managers. */
  identities: ReadonlyMap<string, string | null>;
  roles: ReadonlyMap<string, RoleFacts>;
  /** Every binding of every identity the change set may touch, by uid. */
  bindings: readonly WorldBinding[];
  /** The delegation policies of those identities that the caller may read. */
  policies: ReadonlyMap<string, PolicyFacts>;
}

/** What the caller may see, decided once from its grants (as `Authorizer.can` would). */
export interface Sight {
  group(uid: string): boolean;
  identity(uid: string): boolean;
  role(uid: string): boolean;
  binding(uid: string): boolean;
  /** Whether a binding at `groupUid` would be listable (one the change set creates). */
  bindingsAt(groupUid: string): boolean;
  /** Whether the caller may bind at `groupUid` (`role_bindings.create`). */
  binds(groupUid: string): boolean;
  /** Whether the caller may read (and so set) an identity's delegation policy. */
  policy(identityUid: string): boolean;
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
  readonly #policies: Map<string, PolicyFacts>;

  constructor(
    private readonly facts: WorldFacts,
    private readonly sight: Sight,
  ) {
    for (const b of facts.bindings) this.#bindings.set(b.uid!, b);
    this.#policies = new Map(facts.policies);
  }

  /** The readable delegation policies as they are now, by identity. */
  policies(): ReadonlyMap<string, PolicyFacts> {
    return this.#policies;
  }

  /** The bindings as they are now (expired and scheduled ones too). */
  bindings(): WorldBinding[] {
    return [...this.#bindings.values()];
  }

  /** A binding by uid, as it is now (undefined: gone or never read). */
  binding(uid: string): WorldBinding | undefined {
    return this.#bindings.get(uid);
  }

  /** A role's capabilities at this point of the set (undefined: missing). */
  roleCapabilities(uid: string): readonly Capability[] | undefined {
    return this.#roleCaps.get(uid) ?? this.facts.roles.get(uid)?.capabilities;
  }

  /** What the snapshot held of a group (its managers, roles below). */
  group(uid: string): GroupFacts | undefined {
    return this.facts.groups.get(uid);
  }

  /** The manager of an identity the snapshot read (null: none). */
  identityManager(uid: string): string | null {
    return this.facts.identities.get(uid) ?? null;
  }

  /** The identities below `groupUid` still there (a cascade deletes them). */
  identitiesBelow(groupUid: string): string[] {
    return [...this.facts.identities.keys()].filter(
      (uid) => isSelfOrBelow(groupUid, uid) && uid !== groupUid && this.identityThere(uid),
    );
  }

  private gone(uid: string): boolean {
    return this.#goneGroups.some((g) => isSelfOrBelow(g, uid));
  }

  private identityThere(uid: string): boolean {
    return this.facts.identities.has(uid) && !this.#goneIdentities.has(uid) && !this.gone(uid);
  }

  private groupHere(uid: string): boolean {
    return this.facts.groups.has(uid) && !this.gone(uid) && this.sight.group(uid);
  }

  private identityHere(uid: string): boolean {
    return this.identityThere(uid) && this.sight.identity(uid);
  }

  /**
   * An identity a binding may name: one the caller may list, or one bound (now, at this
   * point of the set) at a group where the caller may bind, by a binding it may list: the
   * real create's rule (`referableWithin`, role-binding-service.ts).
   */
  private identityReferable(uid: string): boolean {
    if (this.identityHere(uid)) return true;
    if (!this.identityThere(uid)) return false;
    for (const b of this.#bindings.values())
      if (
        b.identityUid === uid &&
        this.sight.binds(b.groupUid) &&
        (b.uid === undefined ? this.sight.bindingsAt(b.groupUid) : this.sight.binding(b.uid))
      )
        return true;
    return false;
  }

  private roleHere(uid: string): boolean {
    return this.facts.roles.has(uid) && !this.gone(uid) && this.sight.role(uid);
  }

  /**
   * Whether change `c` applies to the world as it is now: what it names exists (at this
   * point of the set) and the caller may see it, and a binding is placed as a create needs.
   */
  applies(c: AccessChange): Applied {
    if ('createRoleBinding' in c) return this.bindingApplies(c.createRoleBinding);
    if ('deleteRoleBinding' in c) {
      const uid = c.deleteRoleBinding.uid;
      return this.#bindings.has(uid) && this.sight.binding(uid) ? ok : no('role binding not found');
    }
    if ('updateRole' in c) {
      if (!this.roleHere(c.updateRole.uid)) return no('role not found');
      return isBuiltInRole(c.updateRole.uid) ? no('a built-in role cannot be updated') : ok;
    }
    if ('deleteIdentity' in c)
      return this.identityHere(c.deleteIdentity.uid) ? ok : no('identity not found');
    if ('setDelegationPolicy' in c) return this.policyApplies(c.setDelegationPolicy);
    return this.groupHere(c.deleteGroup.uid) ? ok : no('group not found');
  }

  /** A created binding applies where a real create would place it, once per triple. */
  private bindingApplies(b: { groupUid: string; identityUid: string; roleUid: string }): Applied {
    const placement = placementViolations(b.groupUid, b.identityUid, b.roleUid);
    if (placement.length > 0) return no(placement.map((v) => v.description).join('; '));
    if (!this.groupHere(b.groupUid)) return no('group not found');
    if (!this.identityReferable(b.identityUid)) return no('identity not found');
    if (!this.roleHere(b.roleUid) || this.roleCapabilities(b.roleUid) === undefined)
      return no('role not found');
    // One binding per (group, identity, role), expired or not (the real create: ALREADY_EXISTS).
    for (const x of this.#bindings.values())
      if (x.groupUid === b.groupUid && x.identityUid === b.identityUid && x.role.uid === b.roleUid)
        return no('the same role binding exists');
    return ok;
  }

  /** A policy set applies to an identity there whose policy the caller may read. */
  private policyApplies(c: { identityUid: string; actors: readonly string[] }): Applied {
    if (!this.identityHere(c.identityUid)) return no('identity not found');
    // The real set and get need identity.update: what the caller may not read is not read.
    if (!this.sight.policy(c.identityUid))
      return no("the caller may not read this identity's delegation policy (identity.update)");
    if (c.actors.length === 0 && !this.#policies.has(c.identityUid))
      return no('delegation policy not found');
    return ok;
  }

  /** Apply change `index`, which `applies` said applies. */
  apply(c: AccessChange, index: number): void {
    if ('createRoleBinding' in c) {
      const b = c.createRoleBinding;
      this.#bindings.set(`#${index}`, {
        changeIndex: index,
        groupUid: b.groupUid,
        identityUid: b.identityUid,
        role: this.facts.roles.get(b.roleUid)!.ref,
        capabilities: this.roleCapabilities(b.roleUid)!,
        ...grantWindow(b.expireTime, b.notBefore),
        ...(b.condition === undefined ? {} : { condition: b.condition }),
      });
    } else if ('deleteRoleBinding' in c) this.#bindings.delete(c.deleteRoleBinding.uid);
    else if ('updateRole' in c) {
      const { uid, capabilities } = c.updateRole;
      this.#roleCaps.set(uid, capabilities);
      for (const [k, b] of this.#bindings)
        if (b.role.uid === uid) this.#bindings.set(k, { ...b, capabilities });
    } else if ('deleteIdentity' in c) {
      const uid = c.deleteIdentity.uid;
      this.#goneIdentities.add(uid);
      this.#policies.delete(uid);
      for (const [k, b] of this.#bindings) if (b.identityUid === uid) this.#bindings.delete(k);
    } else if ('setDelegationPolicy' in c) {
      const { identityUid, actors, capabilities, maxLifetimeSeconds } = c.setDelegationPolicy;
      if (actors.length === 0) this.#policies.delete(identityUid);
      // As the real set stores it (delegation-policy-service.ts): sorted, once each, capped.
      else
        this.#policies.set(identityUid, {
          actors: [...new Set(actors)].sort(),
          capabilities: [...new Set(capabilities ?? [])].sort(),
          maxLifetimeSeconds: Math.min(
            maxLifetimeSeconds ?? DEFAULT_DELEGATION_LIFETIME_S,
            MAX_DELEGATION_LIFETIME_S,
          ),
        });
    } else {
      const uid = c.deleteGroup.uid;
      this.#goneGroups.push(uid);
      // Everything below goes: bindings there, and identities there with all their bindings
      // and their delegation policies.
      for (const [k, b] of this.#bindings)
        if (isSelfOrBelow(uid, b.groupUid) || isSelfOrBelow(uid, b.identityUid))
          this.#bindings.delete(k);
      for (const id of [...this.#policies.keys()])
        if (isSelfOrBelow(uid, id)) this.#policies.delete(id);
    }
  }
}
