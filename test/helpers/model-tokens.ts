import type { Capability } from '../../src/auth/capabilities.js';
import { live, path, type ModelBinding, type ModelWorld } from './access-model.js';
import * as model from './access-model.js';

/**
 * The access model's principal for a down-scoped, perhaps delegated, API token
 * (docs/oauth.md, Down-scoping and Delegation), written to be obviously right: the token
 * holds exactly what its identity holds (the model's `can`) ∩ its scope ∩ its groups ∩ its
 * delegation policy's capabilities. Nothing else is new: a conditional binding grants as
 * the model already says (here, no request: nothing).
 *
 * 7. A token exchange is refused when it would widen or name nothing: an actor the subject's
 *    policy does not name is `invalid_grant`; a scope beyond the policy, or a capability
 *    the identity holds (live, unconditional) nowhere within the groups asked, is
 *    `invalid_scope`; delegated without a scope, the scope is what the policy allows of
 *    what the identity holds within the groups (none: `invalid_scope`); a group where it
 *    holds none of the scope (at it, above it or below it) is `invalid_target`.
 * 8. A down-scoped token (one with a scope or groups) is never "itself" for the access check:
 *    it learns of its identity's bindings only as far as its own grants let it list them,
 *    like anyone else's. A token exchanged with neither is its identity's, as the model's
 *    check says.
 */
export interface ModelToken {
  identity: string;
  /** The `scope` claim; absent: every capability. */
  scope?: ReadonlySet<Capability>;
  /** The `arbor_groups` claim (group uids); absent: everywhere. */
  groups?: readonly string[];
  /** A delegated token's actor and its subject's policy capabilities (as they are now). */
  delegation?: { actor: string; caps: ReadonlySet<Capability> };
}

/** A delegation policy of an identity: the actors it names and the capabilities it caps. */
export interface ModelPolicy {
  actors: readonly string[];
  caps: ReadonlySet<Capability>;
}

/** What is asked of the token endpoint, besides the subject's own unrestricted token. */
export interface TokenAsk {
  identity: string;
  scope?: readonly Capability[];
  groups?: readonly string[];
  actor?: string;
}

const covers = (scope: string, uid: string) => uid === scope || uid.startsWith(`${scope}/`);

/** The token's `can`: the identity's, intersected with everything the token carries. */
export function tokenCan(w: ModelWorld, t: ModelToken, cap: Capability, uid: string): boolean {
  return (
    (t.scope === undefined || t.scope.has(cap)) &&
    (t.delegation === undefined || t.delegation.caps.has(cap)) &&
    (t.groups === undefined || t.groups.some((g) => covers(g, uid))) &&
    model.can(w, t.identity, cap, uid)
  );
}

/** Whether `b` holds at or above or below one of `groups` (everywhere when absent). */
function within(b: ModelBinding, groups: readonly string[] | undefined): boolean {
  return groups === undefined || groups.some((g) => covers(g, b.group) || covers(b.group, g));
}

/** Rule 7's "held": a live, unconditional binding of the identity with `cap`, within `groups`. */
function held(
  w: ModelWorld,
  identity: string,
  cap: Capability | undefined,
  groups: readonly string[] | undefined,
): boolean {
  return w.bindings.some(
    (b) =>
      b.identity === identity &&
      b.condition === undefined &&
      live(b) &&
      (cap === undefined || b.caps.has(cap)) &&
      within(b, groups),
  );
}

type ExchangeOutcome = ModelToken | 'invalid_grant' | 'invalid_scope' | 'invalid_target';

/** Rule 7: the token the endpoint issues for `ask`, or its refusal. */
export function exchangeOutcome(
  w: ModelWorld,
  policies: ReadonlyMap<string, ModelPolicy>,
  ask: TokenAsk,
): ExchangeOutcome {
  const { identity, groups } = ask;
  let policy: ModelPolicy | undefined;
  if (ask.actor !== undefined) {
    policy = policies.get(identity);
    if (policy === undefined || !policy.actors.includes(ask.actor)) return 'invalid_grant';
  }
  let scope = ask.scope;
  if (policy !== undefined) {
    if (scope !== undefined && scope.some((c) => !policy.caps.has(c))) return 'invalid_scope';
    if (scope === undefined) {
      scope = [...policy.caps].filter((c) => held(w, identity, c, groups));
      if (scope.length === 0) return 'invalid_scope';
    }
  }
  if (ask.scope !== undefined && ask.scope.some((c) => !held(w, identity, c, groups)))
    return 'invalid_scope';
  for (const g of groups ?? [])
    if (
      scope === undefined
        ? !held(w, identity, undefined, [g])
        : !scope.some((c) => held(w, identity, c, [g]))
    )
      return 'invalid_target';
  return {
    identity,
    ...(scope === undefined ? {} : { scope: new Set(scope) }),
    ...(groups === undefined ? {} : { groups: [...new Set(groups)] }),
    ...(ask.actor === undefined ? {} : { delegation: { actor: ask.actor, caps: policy!.caps } }),
  };
}

/** Rule 8: the access check asked through the token about `identity`'s `cap` at `group`. */
export function tokenCheck(
  w: ModelWorld,
  t: ModelToken,
  identity: string,
  cap: Capability,
  group: string,
): 'not found' | { allowed: boolean; grants: model.ModelGrant[] } {
  const self =
    t.identity === identity &&
    t.scope === undefined &&
    t.groups === undefined &&
    t.delegation === undefined;
  if (self) return model.check(w, identity, identity, cap, group);
  if (!tokenCan(w, t, 'identity.list', identity)) return 'not found';
  if (!tokenCan(w, t, 'groups.list', group)) return 'not found';
  const grants = w.bindings
    .filter(
      (b) =>
        b.identity === identity &&
        b.condition === undefined &&
        live(b) &&
        b.caps.has(cap) &&
        covers(b.group, group) &&
        tokenCan(w, t, 'role_bindings.list', b.uid),
    )
    .map((b) => ({ bindingUid: b.uid, groupUid: b.group, path: path(b.group, group) }))
    .sort((a, b) => (a.bindingUid < b.bindingUid ? -1 : 1));
  return { allowed: grants.length > 0, grants };
}
