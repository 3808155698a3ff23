import { createHash } from 'node:crypto';
import {
  changedFields,
  groupFields,
  identityFields,
  identityFieldsOf,
  stableJson,
} from '../wire/manifest-spec.js';
import type { Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { planBindings } from './plan-bindings.js';
import { fieldChanges, matchOne, PlanContext, type Place } from './plan-context.js';
import { manifestKey, type Manifest } from './plan-manifests.js';
import { planPrune } from './plan-prune.js';
import { getSeen, listSeen, parentOf, type Seen } from './plan-server.js';
import { namedRefs } from './plan-refs.js';
import type { PlanDraft } from './plan-types.js';

type GroupManifest = Extract<Manifest, { kind: 'Group' }>;
type IdentityManifest = Extract<Manifest, { kind: 'Identity' }>;

/**
 * The plan of making Arbor match `manifests`, as the caller of session `s` sees Arbor:
 * per manifest a create, an update of exactly the fields that differ, or nothing; with
 * `prune`, deletes of what the manifests no longer name below the groups they declare.
 * Each manifest maps to Arbor fields as the reconciler maps it (src/wire/manifest-spec.ts).
 * A manifest stands for the resource `spec.adoptUid` names, else the one of its name in its
 * parent (a role binding: of its identity and role at its group). The roles and identities
 * the changes name are read too (`refs`); the access delta and the token come after
 * (plan-command.ts).
 * @throws CliError for manifests that cannot be planned, and for failed API calls.
 */
export async function buildPlan(
  s: Session,
  manifests: readonly Manifest[],
  o: { prune: boolean; now?: number },
): Promise<PlanDraft> {
  const ctx = new PlanContext(s, manifests, o.now ?? Date.now());
  for (const g of groupsParentsFirst(manifests)) await planGroup(ctx, g);
  for (const m of manifests) if (m.kind === 'Identity') await planIdentity(ctx, m);
  await planBindings(ctx);
  if (o.prune) await planPrune(ctx);
  return {
    api: s.api,
    changes: ctx.changes,
    unchanged: ctx.unchanged,
    refs: await namedRefs(s, ctx.changes),
    notes: ctx.notes,
  };
}

/** Groups ordered so that a parentRef is planned before the group naming it. */
function groupsParentsFirst(manifests: readonly Manifest[]): GroupManifest[] {
  const groups = manifests.filter((m): m is GroupManifest => m.kind === 'Group');
  const byKey = new Map(groups.map((g) => [manifestKey(g), g]));
  const out: GroupManifest[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (g: GroupManifest) => {
    const key = manifestKey(g);
    if (state.get(key) === 'done') return;
    if (state.get(key) === 'visiting')
      throw new CliError(`${key}: its parentRef leads back to itself`, EXIT.INVALID);
    state.set(key, 'visiting');
    const ref = g.spec.parentRef?.name;
    const parent = ref && byKey.get(manifestKey({ ...g, name: ref }));
    if (parent) visit(parent);
    state.set(key, 'done');
    out.push(g);
  };
  groups.forEach(visit);
  return out;
}

/** The group a manifest's parentRef/parentUid (groupRef/groupUid) names; null: none. */
function parentPlace(ctx: PlanContext, m: GroupManifest | IdentityManifest): Place | null {
  const [ref, uid, field] =
    m.kind === 'Group'
      ? [m.spec.parentRef?.name, m.spec.parentUid, 'spec.parentRef']
      : [m.spec.groupRef?.name, m.spec.groupUid, 'spec.groupRef'];
  if (ref) return ctx.placeOf('Group', m.namespace, ref, manifestKey(m), field);
  return uid ? { uid } : null;
}

/** The existing resource a manifest stands for: adoptUid's, else the one of its name. */
async function existing(
  ctx: PlanContext,
  m: Manifest,
  name: string,
  parent: Place | null,
): Promise<Seen | undefined> {
  const object = manifestKey(m);
  if (m.spec.adoptUid) {
    const seen = await getSeen(ctx.s, m.kind, m.spec.adoptUid);
    if (!seen)
      throw new CliError(
        `${object}: spec.adoptUid ${m.spec.adoptUid} does not exist`,
        EXIT.NOT_FOUND,
      );
    return seen;
  }
  if (parent?.object !== undefined) return undefined; // its parent is new: so is it
  const query: Record<string, string> = { name };
  if (parent) query['uidp.children_of'] = parent.uid;
  const found = (await listSeen(ctx.s, m.kind, query)).filter(
    (x) => parentOf(String(x.item.uid)) === (parent?.uid ?? null),
  );
  return matchOne(object, `named "${name}" ${parent ? `in ${parent.uid}` : 'at the top'}`, found);
}

/** Groups and identities cannot move: a resource under another parent is an error. */
function checkParent(object: string, seen: Seen, parent: Place | null): void {
  const uid = String(seen.item.uid);
  const want = parent?.uid ?? null;
  if (parentOf(uid) === want && parent?.object === undefined) return;
  throw new CliError(
    `${object}: ${uid} is in ${parentOf(uid) ?? 'no group (an organization)'}, not in ` +
      `${parent?.uid ?? parent?.object ?? 'no group'}, and nothing in Arbor moves`,
    EXIT.INVALID,
  );
}

async function planGroup(ctx: PlanContext, m: GroupManifest): Promise<void> {
  const object = manifestKey(m);
  const want = groupFields(m.spec, m.name);
  const parent = parentPlace(ctx, m);
  const seen = await existing(ctx, m, want.name, parent);
  if (!seen) {
    ctx.creates(object, {
      action: 'create',
      kind: 'Group',
      object,
      title: want.name,
      ...(parent?.uid ? { parentUid: parent.uid } : {}),
      ...(parent?.object ? { parentObject: parent.object } : {}),
      body: want,
      fields: fieldChanges(want),
    });
    return;
  }
  checkParent(object, seen, parent);
  const have = { name: seen.item.name, description: seen.item.description };
  const patch = changedFields(have, want);
  if (!patch) return ctx.inSync(object, seen);
  ctx.found(object, String(seen.item.uid));
  ctx.changes.push({
    action: 'update',
    kind: 'Group',
    object,
    title: want.name,
    uid: String(seen.item.uid),
    etag: seen.etag,
    body: patch,
    fields: fieldChanges(patch, have),
  });
}

async function planIdentity(ctx: PlanContext, m: IdentityManifest): Promise<void> {
  const object = manifestKey(m);
  const want = identityFields(m.spec, m.name);
  const parent = parentPlace(ctx, m);
  if (!parent) throw new CliError(`${object}: set spec.groupRef or spec.groupUid`, EXIT.INVALID);
  const seen = await existing(ctx, m, want.name, parent);
  if (!seen) {
    ctx.creates(object, {
      action: 'create',
      kind: 'Identity',
      object,
      title: want.name,
      ...(parent.uid ? { parentUid: parent.uid } : { parentObject: parent.object }),
      body: want,
      fields: fieldChanges(want),
    });
    return;
  }
  checkParent(object, seen, parent);
  const have = identityFieldsOf(seen.item as Parameters<typeof identityFieldsOf>[0]);
  let patch = changedFields(have, want);
  // As the reconciler does: a claim match replaces static keys, and both are named.
  if (seen.item.staticKeys)
    patch = { ...(patch ?? want), claimMatch: want.claimMatch, staticKeys: null };
  // In sync, an identity is held to what it is, not to when it last signed in: its ETag
  // moves with lastSeenTime, and the apply job's own sign-in would refuse every apply.
  if (!patch) return ctx.inSync(object, { ...seen, etag: withoutLastSeen(seen) });
  ctx.found(object, String(seen.item.uid));
  ctx.changes.push({
    action: 'update',
    kind: 'Identity',
    object,
    title: want.name,
    uid: String(seen.item.uid),
    etag: seen.etag,
    body: patch,
    fields: fieldChanges(patch, {
      ...have,
      staticKeys: seen.item.staticKeys ? '(static keys)' : undefined,
    }),
  });
}

/** A tag of an identity as it reads less its lastSeenTime (which every sign-in moves). */
function withoutLastSeen(seen: Seen): string {
  const { lastSeenTime: _, ...rest } = seen.item;
  return `identity:${createHash('sha256').update(stableJson(rest)).digest('base64url').slice(0, 27)}`;
}
