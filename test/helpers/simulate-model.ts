import type { Capability } from '../../src/auth/capabilities.js';
import {
  can,
  live,
  path,
  type Caller,
  type ModelBinding,
  type ModelWorld,
} from './access-model.js';

/**
 * The access delta of a change set, written to be obviously right rather than fast: the
 * worlds before and after are built as lists, and every identity, capability and group is
 * asked whether it is held before and after (`can`, a scan over every binding). A change
 * is a GAIN at a group that is held after and not before while its parent is not such a
 * group; a LOSE the other way round; the holes below are the tops of what is held both
 * before and after. Property tests compare `access:simulate` with it.
 *
 * Rules besides access-model.ts's:
 * 6. Changes apply in order, each to the world the ones before left. One naming a group,
 *    identity, role or binding that does not exist there or that the caller may not list
 *    (judged on the caller's grants before the set) is not applied. A built-in role is not
 *    edited. A group delete takes everything below it: bindings there, identities there
 *    with all their bindings. A created binding grants from its notBefore (inclusive; none:
 *    at once) until its expireTime (exclusive; none: ever), as every binding does (rule 2):
 *    one whose expiry has passed, or that has not started, grants nothing now. A set with
 *    a created binding whose notBefore is not before its expireTime is refused whole.
 * 7. Only bindings that count for the caller count (access-model rule 4), before and after;
 *    a created binding counts where the caller may list bindings, or when it is its own.
 * 8. A created binding may carry a condition (`when`, its expression; never evaluated
 *    here). Unconditional deltas are those of the unconditional bindings alone. For each
 *    condition C, a GAIN "when C" is a group held after by C's bindings and held before by
 *    none of C's bindings, the unconditional ones before or the unconditional ones after (a
 *    point held unconditionally on either side is no conditional change); a LOSE "when C"
 *    the other way round. Tops and holes as for unconditional deltas, over those sets.
 */
export type ModelChange =
  | {
      createRoleBinding: {
        groupUid: string;
        identityUid: string;
        roleUid: string;
        expireTime?: string;
        notBefore?: string;
        condition?: { expression: string };
      };
    }
  | { deleteRoleBinding: { uid: string } }
  | { updateRole: { uid: string; capabilities: Capability[] } }
  | { deleteIdentity: { uid: string } }
  | { deleteGroup: { uid: string } };

/** A binding of a simulated world; `key` is its uid, or `#i` for one change i creates. */
export interface SimBinding extends ModelBinding {
  changeIndex?: number;
  /** Rule 8: a conditional binding's expression. */
  when?: string;
}

/** A grant as a delta cites it; `notBefore` and `expireTime` as ISO strings, when set. */
export interface ModelGrantOf {
  binding: string;
  groupUid: string;
  path: string[];
  notBefore?: string;
  expireTime?: string;
}

export interface ModelDelta {
  identity: string;
  capability: Capability;
  group: string;
  effect: 'GAIN' | 'LOSE';
  before: ModelGrantOf[];
  after: ModelGrantOf[];
  unchangedBelow: string[];
  /** Rule 8: a conditional delta's expression. */
  condition?: string;
}

const covers = (scope: string, uid: string) => uid === scope || uid.startsWith(`${scope}/`);
const parent = (uid: string) =>
  uid.includes('/') ? uid.slice(0, uid.lastIndexOf('/')) : undefined;

/** The world as a change set leaves it, change by change. */
interface State {
  groups: string[];
  identities: string[];
  roles: Map<string, ReadonlySet<Capability>>;
  bindings: SimBinding[];
}

/**
 * A created binding's identity: one the caller may list, or one bound at this point of the
 * set (any window; a binding made earlier in the set too) at a group where the caller may
 * bind, by a binding the caller may list (a made one: at its group).
 */
function referable(
  st: State,
  identity: string,
  callerCan: (cap: Capability, uid: string) => boolean,
): boolean {
  return (
    callerCan('identity.list', identity) ||
    st.bindings.some(
      (x) =>
        x.identity === identity &&
        callerCan('role_bindings.create', x.group) &&
        callerCan('role_bindings.list', x.changeIndex === undefined ? x.uid : x.group),
    )
  );
}

/** Rule 6 for a created binding. */
function bindOne(
  w: ModelWorld,
  st: State,
  b: {
    groupUid: string;
    identityUid: string;
    roleUid: string;
    expireTime?: string;
    notBefore?: string;
    condition?: { expression: string };
  },
  i: number,
  callerCan: (cap: Capability, uid: string) => boolean,
): boolean {
  const ok =
    st.groups.includes(b.groupUid) &&
    callerCan('groups.list', b.groupUid) &&
    st.identities.includes(b.identityUid) &&
    referable(st, b.identityUid, callerCan) &&
    roleAlive(b.roleUid, st.groups, w) &&
    (w.builtin.has(b.roleUid) || callerCan('roles.list', b.roleUid)) &&
    // One binding per (group, identity, role), expired or not.
    !st.bindings.some(
      (x) => x.group === b.groupUid && x.identity === b.identityUid && x.role === b.roleUid,
    );
  if (ok)
    st.bindings.push({
      uid: `#${i}`,
      changeIndex: i,
      group: b.groupUid,
      identity: b.identityUid,
      role: b.roleUid,
      caps: st.roles.get(b.roleUid)!,
      ...(b.expireTime === undefined ? {} : { end: Date.parse(b.expireTime) }),
      ...(b.notBefore === undefined ? {} : { start: Date.parse(b.notBefore) }),
      ...(b.condition === undefined ? {} : { when: b.condition.expression }),
    });
  return ok;
}

/** Rule 6 for one change: whether it applies, and the state after it. */
function applyOne(
  w: ModelWorld,
  st: State,
  ch: ModelChange,
  i: number,
  callerCan: (cap: Capability, uid: string) => boolean,
): boolean {
  if ('createRoleBinding' in ch) return bindOne(w, st, ch.createRoleBinding, i, callerCan);
  if ('deleteRoleBinding' in ch) {
    const uid = ch.deleteRoleBinding.uid;
    const ok = st.bindings.some((b) => b.uid === uid) && callerCan('role_bindings.list', uid);
    if (ok) st.bindings = st.bindings.filter((b) => b.uid !== uid);
    return ok;
  }
  if ('updateRole' in ch) {
    const { uid, capabilities: caps } = ch.updateRole;
    const ok = roleAlive(uid, st.groups, w) && !w.builtin.has(uid) && callerCan('roles.list', uid);
    if (ok) {
      const set = new Set(caps);
      st.roles.set(uid, set);
      st.bindings = st.bindings.map((b) => (b.role === uid ? { ...b, caps: set } : b));
    }
    return ok;
  }
  if ('deleteIdentity' in ch) {
    const uid = ch.deleteIdentity.uid;
    const ok = st.identities.includes(uid) && callerCan('identity.list', uid);
    if (ok) {
      st.identities = st.identities.filter((x) => x !== uid);
      st.bindings = st.bindings.filter((b) => b.identity !== uid);
    }
    return ok;
  }
  const uid = ch.deleteGroup.uid;
  const ok = st.groups.includes(uid) && callerCan('groups.list', uid);
  if (ok) {
    st.groups = st.groups.filter((g) => !covers(uid, g));
    st.identities = st.identities.filter((x) => !covers(uid, x));
    st.bindings = st.bindings.filter((b) => !covers(uid, b.group) && !covers(uid, b.identity));
  }
  return ok;
}

/** The index of the first created binding whose window is empty (the set is refused). */
export function emptyWindow(changes: readonly ModelChange[]): number | undefined {
  const i = changes.findIndex(
    (ch) =>
      'createRoleBinding' in ch &&
      ch.createRoleBinding.notBefore !== undefined &&
      ch.createRoleBinding.expireTime !== undefined &&
      Date.parse(ch.createRoleBinding.notBefore) >= Date.parse(ch.createRoleBinding.expireTime),
  );
  return i < 0 ? undefined : i;
}

export function simulate(
  w: ModelWorld,
  c: Caller,
  changes: readonly ModelChange[],
  now: number,
  capabilities: readonly Capability[],
): { applied: boolean[]; deltas: ModelDelta[] } {
  // What the caller may see is decided by its unconditional grants alone (rule 8).
  const sight: ModelWorld = { ...w, bindings: plainOf(w.bindings) };
  const callerCan = (cap: Capability, uid: string) => c === 'admin' || can(sight, c, cap, uid);
  const st: State = {
    groups: [...w.groups],
    identities: [...w.identities],
    roles: new Map(w.roles),
    bindings: w.bindings.map((b) => ({ ...b })),
  };
  const applied = changes.map((ch, i) => applyOne(w, st, ch, i, callerCan));
  const bindings = st.bindings;
  const counts = (b: SimBinding) =>
    c === 'admin' ||
    b.identity === c ||
    can(sight, c, 'role_bindings.list', b.changeIndex === undefined ? b.uid : b.group);
  const before = w.bindings.filter(counts);
  const after = bindings.filter(counts);
  return { applied, deltas: deltasOf(w, before, after, capabilities, now) };
}

/** The unconditional bindings among `bs` (a world's may be conditional ones: rule 8). */
const plainOf = (bs: readonly ModelBinding[]): ModelBinding[] =>
  bs.filter((b) => (b as SimBinding).when === undefined);

/** Whether a custom role is still there: custom roles live at the organization. */
function roleAlive(uid: string, groups: readonly string[], w: ModelWorld): boolean {
  if (!w.roles.has(uid)) return false;
  return w.builtin.has(uid) || groups.includes(w.roleGroup);
}

function deltasOf(
  w: ModelWorld,
  before: readonly SimBinding[],
  after: readonly SimBinding[],
  capabilities: readonly Capability[],
  now: number,
): ModelDelta[] {
  const plain = (bs: readonly SimBinding[]) => bs.filter((b) => b.when === undefined);
  const under = (bs: readonly SimBinding[], e: string) => bs.filter((b) => b.when === e);
  const u0 = plain(before);
  const u1 = plain(after);
  const out = sidesOf(w, u0, u1, capabilities, now, { gains: u1, loses: u0 });
  // Rule 8: per condition, what it alone grants against everything else held.
  const conditions = [...new Set([...before, ...after].flatMap((b) => b.when ?? []))].sort();
  for (const e of conditions) {
    const c0 = under(before, e);
    const c1 = under(after, e);
    const gains = sidesOf(w, [...c0, ...u0, ...u1], c1, capabilities, now, { gains: c1 });
    const loses = sidesOf(w, c0, [...c1, ...u0, ...u1], capabilities, now, { loses: c0 });
    out.push(...[...gains, ...loses].map((d) => ({ ...d, condition: e })));
  }
  return out.sort((a, b) => {
    const ka = `${a.identity}\0${a.capability}\0${a.group}\0${a.condition ?? ''}`;
    const kb = `${b.identity}\0${b.capability}\0${b.group}\0${b.condition ?? ''}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

/**
 * The GAINs (where `after` holds and `before` does not, tops only) and LOSEs (the other way
 * round) asked for, each citing the bindings of `proofs` granting it there.
 */
function sidesOf(
  w: ModelWorld,
  before: readonly SimBinding[],
  after: readonly SimBinding[],
  capabilities: readonly Capability[],
  now: number,
  proofs: { gains?: readonly SimBinding[]; loses?: readonly SimBinding[] },
): ModelDelta[] {
  const world = (bs: readonly SimBinding[]): ModelWorld => ({ ...w, bindings: [...bs] });
  const w0 = world(before);
  const w1 = world(after);
  const ids = [...new Set([...before, ...after].map((b) => b.identity))];
  const out: ModelDelta[] = [];
  const grants = (bs: readonly SimBinding[], id: string, cap: Capability, g: string) =>
    bs
      .filter((b) => b.identity === id && live(b, now) && b.caps.has(cap) && covers(b.group, g))
      .map((b) => ({
        binding: b.uid,
        groupUid: b.group,
        path: path(b.group, g),
        ...(b.start === undefined ? {} : { notBefore: new Date(b.start).toISOString() }),
        ...(b.end === undefined ? {} : { expireTime: new Date(b.end).toISOString() }),
      }))
      .sort((x, y) => (keyOf(x.binding) < keyOf(y.binding) ? -1 : 1));
  for (const id of ids)
    for (const cap of capabilities)
      for (const g of w.groups) {
        const h0 = (u: string) => can(w0, id, cap, u);
        const h1 = (u: string) => can(w1, id, cap, u);
        const up = parent(g);
        const top = (held: (u: string) => boolean, other: (u: string) => boolean) =>
          held(g) && !other(g) && (up === undefined || !(held(up) && !other(up)));
        // The tops of what is held both before and after, strictly below.
        const holes = () =>
          w.groups
            .filter((h) => h.startsWith(`${g}/`) && h0(h) && h1(h))
            .filter((h) => !(h0(parent(h)!) && h1(parent(h)!)))
            .sort();
        if (proofs.gains && top(h1, h0))
          out.push({
            identity: id,
            capability: cap,
            group: g,
            effect: 'GAIN',
            before: [],
            after: grants(proofs.gains, id, cap, g),
            unchangedBelow: holes(),
          });
        if (proofs.loses && top(h0, h1))
          out.push({
            identity: id,
            capability: cap,
            group: g,
            effect: 'LOSE',
            before: grants(proofs.loses, id, cap, g),
            after: [],
            unchangedBelow: holes(),
          });
      }
  return out;
}

/** Existing bindings by uid first, then created ones by change. */
function keyOf(binding: string): string {
  return binding.startsWith('#') ? `~${binding.slice(1).padStart(8, '0')}` : binding;
}
