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
 * 6. A conditional binding grants only on a decision that evaluates its condition (one made
 *    with a request: REST and gRPC resource reads and writes, the access check) and finds it
 *    true; everywhere else (a decision without a request, lists, who-can, what-can, the
 *    caller's own sight) it grants nothing. The check evaluates with its own time and group,
 *    `resource.type` and `resource.name` "" and no claims. A missing claim is an error;
 *    `!`, `&&` and `||` carry an error as CEL does (`false && error` is false, `true ||
 *    error` true, anything else with an error is an error), and an error denies.
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
  /** Rule 6: the binding's condition; absent: unconditional. */
  condition?: ModelCondition;
}

/**
 * The condition shapes the model knows, each decided here by hand (`decide`), never by the
 * CEL evaluator it is compared with; `expressionOf` spells one as the binding stores it.
 */
export type ModelCondition =
  | { before: number }
  | { after: number }
  | { groupPathStartsWith: string }
  | { nameStartsWith: string }
  | { typeIs: string }
  | { claim: string; equals: string }
  | { not: ModelCondition }
  | { and: [ModelCondition, ModelCondition] }
  | { or: [ModelCondition, ModelCondition] };

/** What a condition is decided over: one decision's request (rule 6). */
export interface ModelRequest {
  time: number;
  /** The path of names, from the organization, of the group the resource is or hangs under. */
  groupPath: string;
  type: string;
  name: string;
  claims: ReadonlyMap<string, string>;
}

export function expressionOf(c: ModelCondition): string {
  const str = (x: string) => JSON.stringify(x);
  const at = (ms: number) => `timestamp(${str(new Date(ms).toISOString())})`;
  if ('before' in c) return `request.time < ${at(c.before)}`;
  if ('after' in c) return `request.time > ${at(c.after)}`;
  if ('groupPathStartsWith' in c)
    return `resource.group.path.startsWith(${str(c.groupPathStartsWith)})`;
  if ('nameStartsWith' in c) return `resource.name.startsWith(${str(c.nameStartsWith)})`;
  if ('typeIs' in c) return `resource.type == ${str(c.typeIs)}`;
  if ('claim' in c) return `token.claims.${c.claim} == ${str(c.equals)}`;
  if ('not' in c) return `!(${expressionOf(c.not)})`;
  if ('and' in c) return `(${expressionOf(c.and[0])}) && (${expressionOf(c.and[1])})`;
  return `(${expressionOf(c.or[0])}) || (${expressionOf(c.or[1])})`;
}

/** Rule 6's three values: true, false, or an error (which denies at the top). */
function decide(c: ModelCondition, r: ModelRequest): boolean | 'error' {
  if ('before' in c) return r.time < c.before;
  if ('after' in c) return r.time > c.after;
  if ('groupPathStartsWith' in c) return r.groupPath.startsWith(c.groupPathStartsWith);
  if ('nameStartsWith' in c) return r.name.startsWith(c.nameStartsWith);
  if ('typeIs' in c) return r.type === c.typeIs;
  if ('claim' in c) {
    const v = r.claims.get(c.claim);
    return v === undefined ? 'error' : v === c.equals;
  }
  if ('not' in c) {
    const v = decide(c.not, r);
    return v === 'error' ? v : !v;
  }
  const [x, y] = ('and' in c ? c.and : c.or).map((d) => decide(d, r));
  const absorbing = 'and' in c ? false : true;
  if (x === absorbing || y === absorbing) return absorbing;
  return x === 'error' || y === 'error' ? 'error' : !absorbing;
}

/** Rule 6: whether `c` holds for the request `r`. */
export function holds(c: ModelCondition, r: ModelRequest): boolean {
  return decide(c, r) === true;
}

/** Rule 6: whether `b` grants on a decision with the request `r` (or none). */
function grantsOn(b: ModelBinding, r: ModelRequest | undefined): boolean {
  return b.condition === undefined || (r !== undefined && holds(b.condition, r));
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
  /** Each group's path of names from its organization (rule 6's `resource.group.path`). */
  groupPaths?: ReadonlyMap<string, string>;
}

/** The path of names of the group `uid` is or hangs under, nearest (rule 6). */
export function groupPathOf(w: ModelWorld, uid: string): string {
  for (let u = uid; u.includes('/'); u = u.slice(0, u.lastIndexOf('/'))) {
    const p = w.groupPaths?.get(u);
    if (p !== undefined) return p;
  }
  const p = w.groupPaths?.get(uid.split('/')[0]!);
  if (p === undefined) throw new Error(`the model knows no group path for ${uid}`);
  return p;
}

/** `admin`, or an identity by uid. */
export type Caller = string;

const covers = (scope: string, uid: string) => uid === scope || uid.startsWith(`${scope}/`);

/** Rules 1, 2 and 6: without a request `r`, no conditional binding grants. */
export function can(
  w: ModelWorld,
  identity: string,
  cap: Capability,
  uid: string,
  r?: ModelRequest,
): boolean {
  return w.bindings.some(
    (b) =>
      b.identity === identity &&
      live(b) &&
      b.caps.has(cap) &&
      covers(b.group, uid) &&
      grantsOn(b, r),
  );
}

/**
 * Whether a condition decided a decision with the request `r`: `granted` when only a
 * conditional binding grants it, `denied` when none grants and a conditional binding would
 * have, had its condition held. For tests that count the decisions conditions made.
 */
export function decidedByCondition(
  w: ModelWorld,
  identity: string,
  cap: Capability,
  uid: string,
  r: ModelRequest,
): 'granted' | 'denied' | undefined {
  if (can(w, identity, cap, uid)) return undefined;
  if (can(w, identity, cap, uid, r)) return 'granted';
  const would = w.bindings.some(
    (b) =>
      b.identity === identity &&
      b.condition !== undefined &&
      live(b) &&
      b.caps.has(cap) &&
      covers(b.group, uid),
  );
  return would ? 'denied' : undefined;
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
  r?: ModelRequest,
): ModelGrant[] {
  return w.bindings
    .filter(
      (b) =>
        b.identity === identity &&
        live(b) &&
        b.caps.has(cap) &&
        covers(b.group, group) &&
        counts(w, c, b) &&
        grantsOn(b, r),
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
  // Rule 6: the check evaluates with its own time and group, and nothing else of a request.
  const r = w.bindings.some((b) => b.condition !== undefined)
    ? { time: Date.now(), groupPath: groupPathOf(w, group), type: '', name: '', claims: new Map() }
    : undefined;
  const grants = granting(w, c, identity, cap, group, r);
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
  /** Rule 6: the conditional bindings at the group, listed apart from what it holds. */
  conditionalBindingUids: string[];
}

export function whatCan(
  w: ModelWorld,
  c: Caller,
  identity: string,
): 'not found' | ModelGroupAccess[] {
  if (!mayAskAbout(w, c, identity)) return 'not found';
  const all = w.bindings.filter((b) => b.identity === identity && live(b) && counts(w, c, b));
  // Rule 6: what-can is decided without a request, so a conditional binding holds nothing
  // there: its group is listed, the binding apart (`conditionalBindingUids`).
  const mine = all.filter((b) => b.condition === undefined);
  const groups = [...new Set(all.map((b) => b.group))].sort();
  const capsOf = (bs: ModelBinding[]) => [...new Set(bs.flatMap((b) => [...b.caps]))].sort();
  const uidsAt = (bs: ModelBinding[], g: string) =>
    bs
      .filter((b) => b.group === g)
      .map((b) => b.uid)
      .sort();
  return groups.map((g) => ({
    groupUid: g,
    bindingUids: uidsAt(mine, g),
    capabilities: capsOf(mine.filter((b) => b.group === g)),
    effectiveCapabilities: capsOf(mine.filter((b) => covers(b.group, g))),
    conditionalBindingUids: uidsAt(
      all.filter((b) => b.condition !== undefined),
      g,
    ),
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
