import type { Capability } from '../../src/auth/capabilities.js';

/**
 * The access rules, written to be obviously right rather than fast: every answer is a
 * scan over every binding. Property tests compare the real authorizer and the access
 * service against it; a mismatch is a bug in one of the two.
 *
 * 1. A live binding of a role at G grants the role's capabilities at G and below it.
 * 2. A binding grants only inside its window: from its start (`notBefore`, inclusive) until
 *    its end (`expireTime`, exclusive); before it starts and once it has ended, nothing.
 * 3. No escalation: a binding is created only by a caller holding `role_bindings.create`
 *    at its group and every capability of its role there, who may list the role (built-in
 *    roles are visible to all) and the identity, or sees the identity already bound at a
 *    group where it may bind (by a binding it may list). Refused, the answer says why: NOT_FOUND
 *    for a group the caller cannot see, INVALID_ARGUMENT for an identity or role it cannot
 *    see, PERMISSION_DENIED for a capability it lacks.
 * 5. A group is deleted only by a caller holding `groups.delete` at it (else NOT_FOUND, or
 *    PERMISSION_DENIED if it may see it), and only when nothing hangs under it.
 * 4. An access answer counts only the bindings the caller may list (all for the admin;
 *    its own for an identity), about identities it may list (or itself), at groups it
 *    may list (anything when asking about itself). Who-can names holders by uid, as a
 *    listed binding does: a holder counts by its bindings alone, whether or not the caller
 *    may list its identity.
 */
export interface ModelBinding {
  uid: string;
  group: string;
  identity: string;
  role: string;
  caps: ReadonlySet<Capability>;
  /** Epoch ms of `notBefore`; absent: from creation. */
  start?: number;
  /** Epoch ms of `expireTime`; absent: never ends. */
  end?: number;
}

/** Rule 2: whether `b` grants now. */
export function live(b: ModelBinding, now = Date.now()): boolean {
  return (b.start === undefined || b.start <= now) && (b.end === undefined || now < b.end);
}

export interface ModelWorld {
  groups: string[];
  identities: string[];
  /** Role uid → its capabilities (custom and built-in). */
  roles: Map<string, ReadonlySet<Capability>>;
  /** The built-in roles among `roles`: visible to every caller. */
  builtin: ReadonlySet<string>;
  /** Custom roles are defined at the organization: what hangs under it besides groups. */
  roleGroup: string;
  bindings: ModelBinding[];
}

/** `admin`, or an identity by uid. */
export type Caller = string;

const covers = (scope: string, uid: string) => uid === scope || uid.startsWith(`${scope}/`);

export function can(w: ModelWorld, identity: string, cap: Capability, uid: string): boolean {
  return w.bindings.some(
    (b) => b.identity === identity && live(b) && b.caps.has(cap) && covers(b.group, uid),
  );
}

function callerCan(w: ModelWorld, c: Caller, cap: Capability, uid: string): boolean {
  return c === 'admin' || can(w, c, cap, uid);
}

function counts(w: ModelWorld, c: Caller, b: ModelBinding): boolean {
  return c === 'admin' || b.identity === c || can(w, c, 'role_bindings.list', b.uid);
}

function mayAskAbout(w: ModelWorld, c: Caller, identity: string): boolean {
  return identity === c || callerCan(w, c, 'identity.list', identity);
}

/** The groups from `from` down to `to`, both included. */
export function path(from: string, to: string): string[] {
  const out = [to];
  for (let u = to; u !== from;) {
    u = u.slice(0, u.lastIndexOf('/'));
    out.unshift(u);
  }
  return out;
}

export interface ModelGrant {
  bindingUid: string;
  groupUid: string;
  path: string[];
}

function granting(
  w: ModelWorld,
  c: Caller,
  identity: string,
  cap: Capability,
  group: string,
): ModelGrant[] {
  return w.bindings
    .filter(
      (b) =>
        b.identity === identity &&
        live(b) &&
        b.caps.has(cap) &&
        covers(b.group, group) &&
        counts(w, c, b),
    )
    .map((b) => ({ bindingUid: b.uid, groupUid: b.group, path: path(b.group, group) }))
    .sort((a, b) => (a.bindingUid < b.bindingUid ? -1 : 1));
}

export type ModelCheck = 'not found' | { allowed: boolean; grants: ModelGrant[] };

export function check(
  w: ModelWorld,
  c: Caller,
  identity: string,
  cap: Capability,
  group: string,
): ModelCheck {
  if (identity !== c) {
    if (!callerCan(w, c, 'identity.list', identity)) return 'not found';
    if (!callerCan(w, c, 'groups.list', group)) return 'not found';
  }
  const grants = granting(w, c, identity, cap, group);
  return { allowed: grants.length > 0, grants };
}

export function whoCan(
  w: ModelWorld,
  c: Caller,
  group: string,
  cap: Capability,
): 'not found' | { identityUid: string; grants: ModelGrant[] }[] {
  if (!callerCan(w, c, 'groups.list', group)) return 'not found';
  return w.identities
    .map((i) => ({ identityUid: i, grants: granting(w, c, i, cap, group) }))
    .filter((h) => h.grants.length > 0)
    .sort((a, b) => (a.identityUid < b.identityUid ? -1 : 1));
}

export interface ModelGroupAccess {
  groupUid: string;
  bindingUids: string[];
  capabilities: Capability[];
  effectiveCapabilities: Capability[];
}

export function whatCan(
  w: ModelWorld,
  c: Caller,
  identity: string,
): 'not found' | ModelGroupAccess[] {
  if (!mayAskAbout(w, c, identity)) return 'not found';
  const mine = w.bindings.filter((b) => b.identity === identity && live(b) && counts(w, c, b));
  const groups = [...new Set(mine.map((b) => b.group))].sort();
  const capsOf = (bs: ModelBinding[]) => [...new Set(bs.flatMap((b) => [...b.caps]))].sort();
  return groups.map((g) => ({
    groupUid: g,
    bindingUids: mine
      .filter((b) => b.group === g)
      .map((b) => b.uid)
      .sort(),
    capabilities: capsOf(mine.filter((b) => b.group === g)),
    effectiveCapabilities: capsOf(mine.filter((b) => covers(b.group, g))),
  }));
}

/** How a create ends: made, or refused with the code rule 3 gives. */
export type BindOutcome = 'created' | 'not found' | 'invalid' | 'denied';

/** Rule 3, for a binding of `role` to `identity` at `group` that does not exist yet. */
export function bindOutcome(
  w: ModelWorld,
  c: Caller,
  group: string,
  identity: string,
  role: string,
): BindOutcome {
  if (c === 'admin') return 'created';
  if (!can(w, c, 'role_bindings.create', group))
    return can(w, c, 'groups.list', group) ? 'denied' : 'not found';
  const seesRole = w.builtin.has(role) || can(w, c, 'roles.list', role);
  if (!referable(w, c, identity) || !seesRole) return 'invalid';
  const caps = w.roles.get(role) ?? new Set<Capability>();
  return [...caps].every((cap) => can(w, c, cap, group)) ? 'created' : 'denied';
}

/**
 * Rule 3's identity: one `c` may list, or one already bound (any window) at a group where
 * `c` may bind, by a binding `c` may list: that binding named it to `c`.
 */
function referable(w: ModelWorld, c: string, identity: string): boolean {
  return (
    can(w, c, 'identity.list', identity) ||
    w.bindings.some(
      (b) =>
        b.identity === identity &&
        can(w, c, 'role_bindings.create', b.group) &&
        can(w, c, 'role_bindings.list', b.uid),
    )
  );
}

/** How a delete of a group ends. */
export type DeleteOutcome = 'deleted' | 'not found' | 'denied' | 'not empty';

/** Rule 5: whether `c` may delete `group`, which hangs nothing (bindings, expired ones too). */
export function deleteOutcome(w: ModelWorld, c: Caller, group: string): DeleteOutcome {
  if (!callerCan(w, c, 'groups.delete', group))
    return callerCan(w, c, 'groups.list', group) ? 'denied' : 'not found';
  const under = (uid: string) => uid.startsWith(`${group}/`);
  const empty =
    group !== w.roleGroup &&
    !w.groups.some(under) &&
    !w.identities.some(under) &&
    !w.bindings.some((b) => under(b.uid));
  return empty ? 'deleted' : 'not empty';
}
