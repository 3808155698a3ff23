import type { Authorizer } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Condition } from '../../auth/condition.js';
import type { Principal } from '../../auth/principal.js';
import type { PathBook } from '../names/path-book.js';
import { visibleRoleRef } from '../reference-visibility.js';
import type { UnitOfWork } from '../tx.js';
import type {
  ActingFor,
  CheckResult,
  ConditionalGrant,
  ConditionalHolder,
  GrantProof,
  GroupAccess,
  HolderDelegation,
} from './access.js';
import { MAX_CONDITIONAL_HOLDERS } from './access.js';
import type { AccessStore, BindingGrant, SeenBy } from './access-store.js';
import { grantProofs } from './grant-proofs.js';

/**
 * What access answers say beside their proofs: conditional grants apart from what is held,
 * a delegated caller's "as X for Y", and the delegation policies of who-can's holders.
 */

const sorted = (caps: Iterable<Capability>): Capability[] => [...new Set(caps)].sort();

/**
 * "As X for Y": a delegated caller's subject, actor chain and what it may use now, all
 * from its own principal (the authenticator narrowed its scope by the chain's policies
 * on this request), so saying it reads nothing and reveals nothing it does not hold.
 */
export function actingForOf(p: Principal): ActingFor | undefined {
  if (p.kind !== 'identity' || p.restriction?.actors === undefined) return undefined;
  return {
    identityUid: p.uid,
    actors: [...p.restriction.actors],
    capabilities: sorted(p.restriction.scope ?? []),
  };
}

/** A check's `actingFor`, saying whether the asked capability is within the token's. */
export function checkActingFor(p: Principal, cap: Capability): Pick<CheckResult, 'actingFor'> {
  const a = actingForOf(p);
  return a === undefined
    ? {}
    : { actingFor: { ...a, capabilityInScope: a.capabilities.includes(cap) } };
}

/**
 * The delegation policies of `holders` that let someone act for them with `cap`: only
 * those the caller could read itself (`identity.update` on the holder, as the policy's
 * Get takes), decided before the read, so a policy it may not read is never read.
 * One read for the page (at most its holders).
 */
export async function readableDelegations(
  d: { uow: UnitOfWork; authz: Authorizer; access: AccessStore },
  p: Principal,
  cap: Capability,
  holders: readonly string[],
): Promise<HolderDelegation[]> {
  const readable: string[] = [];
  for (const uid of new Set(holders))
    if (await d.authz.can(p, 'identity.update', uid)) readable.push(uid);
  if (readable.length === 0) return [];
  const policies = await d.uow.read((tx) => d.access.delegationPolicies(tx, readable));
  return policies
    .filter((x) => x.capabilities.includes(cap))
    .map((x) => ({ ...x, actors: [...x.actors], capabilities: [...x.capabilities] }));
}

/** Conditional bindings at one group as what-can lists them, by binding uid. */
export async function conditionalGrantsOf(
  authz: Authorizer,
  p: Principal,
  bindings: readonly BindingGrant[],
): Promise<ConditionalGrant[]> {
  const out: ConditionalGrant[] = [];
  for (const b of [...bindings].sort((x, y) => (x.uid < y.uid ? -1 : 1)))
    out.push({
      bindingUid: b.uid,
      role: await visibleRoleRef(authz, p, b.role),
      when: conditionOnly(b.condition!),
      capabilities: sorted(b.capabilities),
    });
  return out;
}

/** The roles of a page's conditional grants as paths of names (one read for the page). */
export async function withConditionalRolePaths(
  book: PathBook | undefined,
  p: Principal,
  gs: GroupAccess[],
): Promise<GroupAccess[]> {
  const roles = gs.flatMap((g) => (g.conditional ?? []).map((c) => c.role.uid));
  if (book === undefined || roles.length === 0) return gs;
  const paths = await book.of(p, { roles });
  return gs.map((g) =>
    g.conditional === undefined
      ? g
      : {
          ...g,
          conditional: g.conditional.map((c) => {
            const rolePath = paths.role(c.role.uid);
            return rolePath === undefined ? c : { ...c, rolePath };
          }),
        },
  );
}

/**
 * Who holds `cap` at `group` by conditional bindings alone, from the bindings that count
 * for the caller (`seen`, as who-can's holders): a condition is decided per request and a
 * list has none, so they are not holders, but a reviewer must see them. At most
 * MAX_CONDITIONAL_HOLDERS, by uid (one read of identities, one of their bindings).
 */
export async function conditionalHolders(
  d: { uow: UnitOfWork; authz: Authorizer; access: AccessStore },
  p: Principal,
  group: string,
  cap: Capability,
  seen: SeenBy,
): Promise<{ holders: ConditionalHolder[]; more: boolean }> {
  const { bindings, more } = await d.uow.read((tx) =>
    d.access.conditionalGranting(tx, group, cap, seen, MAX_CONDITIONAL_HOLDERS),
  );
  const byIdentity = new Map<string, BindingGrant[]>();
  for (const b of bindings)
    byIdentity.set(b.identityUid, [...(byIdentity.get(b.identityUid) ?? []), b]);
  const holders: ConditionalHolder[] = [];
  for (const [identityUid, held] of byIdentity) {
    const proofs = await grantProofs(d.authz, p, held, group);
    holders.push({ identityUid, grants: proofs.map((g) => ({ ...g, when: whenOf(held, g) })) });
  }
  return { holders, more };
}

/** The condition of the binding behind proof `g`, one of `held`. */
function whenOf(held: readonly BindingGrant[], g: GrantProof): Condition {
  const b = held.find((h) => h.uid === g.bindingUid);
  if (b?.condition === undefined) throw new Error(`binding ${g.bindingUid} has no condition`);
  return conditionOnly(b.condition);
}

/** A stored condition as answers show it: its text, title and description alone. */
function conditionOnly(c: Condition): Condition {
  return {
    expression: c.expression,
    ...(c.title === undefined ? {} : { title: c.title }),
    ...(c.description === undefined ? {} : { description: c.description }),
  };
}
