import { changedFields, nearestRole } from '../wire/manifest-spec.js';
import { CliError, EXIT } from './cli-errors.js';
import { fieldChanges, matchOne, type PlanContext, type Place } from './plan-context.js';
import { manifestKey, type Manifest } from './plan-manifests.js';
import { getSeen, listSeen, rolesNamed, type Seen } from './plan-server.js';
import type { PlanChange } from './plan-types.js';

type BindingManifest = Extract<Manifest, { kind: 'RoleBinding' }>;

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** Plans every RoleBinding manifest, after the groups and identities they reference. */
export async function planBindings(ctx: PlanContext): Promise<void> {
  const roles = new Map<string, Array<{ uid: string; parentUid: string | null }>>();
  for (const m of ctx.manifests) {
    if (m.kind === 'RoleBinding') await planBinding(ctx, m, roles);
  }
}

/**
 * The nearest group that exists of `place` and the groups above it in the manifests, for
 * finding a role by name: a role cannot be defined at a group the plan has yet to create.
 */
function existingAnchor(ctx: PlanContext, place: Place, namespace: string): string {
  let object = place.object;
  for (let i = 0; object !== undefined && i < 1000; i++) {
    const g = ctx.manifests.find((m) => manifestKey(m) === object);
    if (g?.kind !== 'Group') return '';
    if (g.spec.parentUid) return g.spec.parentUid;
    const ref = g.spec.parentRef?.name;
    if (!ref) return '';
    const key = manifestKey({ kind: 'Group', namespace, name: ref });
    const uid = ctx.uids.get(key);
    if (uid !== undefined) return uid;
    object = key;
  }
  return place.uid ?? '';
}

async function roleUidOf(
  ctx: PlanContext,
  m: BindingManifest,
  group: Place,
  cache: Map<string, Array<{ uid: string; parentUid: string | null }>>,
): Promise<string> {
  if (m.spec.roleUid) return m.spec.roleUid;
  const name = m.spec.role ?? '';
  if (name === '')
    throw new CliError(`${manifestKey(m)}: set spec.role or spec.roleUid`, EXIT.INVALID);
  let candidates = cache.get(name);
  if (!candidates) cache.set(name, (candidates = await rolesNamed(ctx.s, name)));
  const role = nearestRole(candidates, existingAnchor(ctx, group, m.namespace));
  if (!role)
    throw new CliError(
      `${manifestKey(m)}: no role "${name}" at its group or above`,
      EXIT.NOT_FOUND,
    );
  return role.uid;
}

function placeOfRef(ctx: PlanContext, m: BindingManifest, kind: 'Group' | 'Identity'): Place {
  const [ref, uid, field] =
    kind === 'Group'
      ? [m.spec.groupRef?.name, m.spec.groupUid, 'spec.groupRef']
      : [m.spec.identityRef?.name, m.spec.identityUid, 'spec.identityRef'];
  if (ref) return ctx.placeOf(kind, m.namespace, ref, manifestKey(m), field);
  if (uid) return { uid };
  throw new CliError(
    `${manifestKey(m)}: set ${field} or ${field.replace('Ref', 'Uid')}`,
    EXIT.INVALID,
  );
}

/** The create of a binding manifest: its group and identity by uid or by manifest. */
function createChange(
  m: BindingManifest,
  title: string,
  group: Place,
  identity: Place,
  roleUid: string,
): PlanChange {
  const object = manifestKey(m);
  const expireTime = m.spec.expireTime ? new Date(m.spec.expireTime).toISOString() : undefined;
  const notBefore = m.spec.notBefore ? new Date(m.spec.notBefore).toISOString() : undefined;
  return {
    action: 'create',
    kind: 'RoleBinding',
    object,
    title,
    ...(group.uid ? { parentUid: group.uid } : { parentObject: group.object }),
    body: {
      ...(identity.uid ? { identityUid: identity.uid } : {}),
      roleUid,
      ...(expireTime ? { expireTime } : {}),
      ...(notBefore ? { notBefore } : {}),
      // A conditional grant is created conditional, and simulated so (plan-simulate.ts).
      ...(m.spec.condition ? { condition: m.spec.condition } : {}),
    },
    ...(identity.object ? { refs: { identityUid: identity.object } } : {}),
    fields: fieldChanges({
      identity: identity.uid ?? identity.object,
      role: m.spec.role ?? roleUid,
      ...(m.spec.expireTime ? { expireTime: m.spec.expireTime } : {}),
      ...(m.spec.notBefore ? { notBefore: m.spec.notBefore } : {}),
      ...(m.spec.condition ? { condition: m.spec.condition.expression } : {}),
    }),
  };
}

/**
 * An RFC 3339 time of the spec as epoch ms, or undefined when unset.
 * @throws CliError INVALID when it is not a time.
 */
function timeOf(m: BindingManifest, field: 'expireTime' | 'notBefore'): number | undefined {
  const v = m.spec[field];
  if (v === undefined || v === '') return undefined;
  const at = typeof v === 'string' && RFC3339.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(at))
    throw new CliError(
      `${manifestKey(m)}: spec.${field} must be an RFC 3339 time, e.g. 2026-12-31T00:00:00Z`,
      EXIT.INVALID,
    );
  return at;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** A binding's window is set once: what differs between Arbor and the manifest, if anything. */
function windowMoved(
  b: Record<string, unknown>,
  startAt: number | undefined,
  expireAt: number | undefined,
): string | undefined {
  const have = (k: string) => (typeof b[k] === 'string' ? Date.parse(b[k]) : undefined);
  if (have('notBefore') !== startAt)
    return `starts at ${str(b.notBefore) ?? 'creation'}, and a start is set once`;
  if (have('expireTime') !== expireAt)
    return `expires at ${str(b.expireTime) ?? 'no time'}, and an expiry is set once`;
  return undefined;
}

async function planBinding(
  ctx: PlanContext,
  m: BindingManifest,
  roles: Map<string, Array<{ uid: string; parentUid: string | null }>>,
): Promise<void> {
  const object = manifestKey(m);
  const group = placeOfRef(ctx, m, 'Group');
  const identity = placeOfRef(ctx, m, 'Identity');
  const roleUid = await roleUidOf(ctx, m, group, roles);
  const expireAt = timeOf(m, 'expireTime');
  const startAt = timeOf(m, 'notBefore');
  if (startAt !== undefined && expireAt !== undefined && startAt >= expireAt)
    throw new CliError(`${object}: spec.notBefore must be before spec.expireTime`, EXIT.INVALID);
  const title =
    `${m.spec.identityRef?.name ?? m.spec.identityUid} → ${m.spec.role ?? roleUid} at ` +
    `${m.spec.groupRef?.name ?? m.spec.groupUid}`;
  const seen = await existingBinding(ctx, m, group, identity, roleUid);
  if (expireAt !== undefined && expireAt <= ctx.now) {
    // As the reconciler: past its expiry a binding is never made (again).
    ctx.notes.push(`${object}: spec.expireTime ${m.spec.expireTime} has passed; nothing is bound`);
    if (seen) ctx.found(object, String(seen.item.uid));
    return;
  }
  const create = createChange(m, title, group, identity, roleUid);
  if (!seen) return ctx.creates(object, create);
  const b = seen.item;
  const uid = String(b.uid);
  const moved = windowMoved(b, startAt, expireAt);
  if (moved !== undefined) {
    if (m.spec.adoptUid) throw new CliError(`${object}: ${uid} ${moved}`, EXIT.INVALID);
    // The window is set once: the binding is replaced (the new one made right after).
    ctx.changes.push({
      action: 'delete',
      kind: 'RoleBinding',
      object,
      title,
      uid,
      etag: seen.etag,
      fields: [],
      why: `replaced: it ${moved}`,
    });
    return ctx.creates(object, create);
  }
  const have = {
    identityUid: (b.identity as { uid?: string } | undefined)?.uid,
    roleUid: (b.role as { uid?: string } | undefined)?.uid,
  };
  const patch = changedFields(have, { identityUid: identity.uid ?? identity.object, roleUid });
  if (!patch) return ctx.inSync(object, seen);
  if (identity.object !== undefined)
    throw new CliError(
      `${object}: adopting ${uid} for an identity the plan creates is not supported; apply twice`,
      EXIT.INVALID,
    );
  ctx.found(object, uid);
  ctx.changes.push({
    action: 'update',
    kind: 'RoleBinding',
    object,
    title,
    uid,
    etag: seen.etag,
    body: patch,
    fields: fieldChanges(patch, have),
  });
}

/** adoptUid's binding, else the one binding of this identity and role at the group. */
async function existingBinding(
  ctx: PlanContext,
  m: BindingManifest,
  group: Place,
  identity: Place,
  roleUid: string,
): Promise<Seen | undefined> {
  const object = manifestKey(m);
  if (m.spec.adoptUid) {
    const seen = await getSeen(ctx.s, 'RoleBinding', m.spec.adoptUid);
    if (!seen)
      throw new CliError(
        `${object}: spec.adoptUid ${m.spec.adoptUid} does not exist`,
        EXIT.NOT_FOUND,
      );
    const at = (seen.item.group as { uid?: string } | undefined)?.uid;
    if (group.uid === undefined || at !== group.uid)
      throw new CliError(
        `${object}: ${m.spec.adoptUid} is at group ${String(at)}, and bindings cannot move`,
        EXIT.INVALID,
      );
    return seen;
  }
  if (group.uid === undefined || identity.uid === undefined) return undefined;
  const found = await listSeen(ctx.s, 'RoleBinding', {
    'uidp.children_of': group.uid,
    identity: identity.uid,
    role: roleUid,
  });
  return matchOne(object, 'this identity’s binding of this role here', found);
}
