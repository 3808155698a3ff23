import type { PlanContext } from './plan-context.js';
import type { ManifestKind } from './plan-manifests.js';
import { listSeen, type Seen } from './plan-server.js';
import type { PlanChange } from './plan-types.js';

/**
 * `--prune`: what the manifests manage is the groups they declare, so below each declared
 * group that exists, every role binding, identity and child group no manifest stands for
 * is deleted. Nothing above or beside those groups is looked at, and identities with
 * static keys (which no manifest can describe) are left alone. Bindings go first, groups
 * last and deepest first; a group that still holds something Arbor refuses to delete.
 */
export async function planPrune(ctx: PlanContext): Promise<void> {
  const declared = ctx.manifests
    .filter((m) => m.kind === 'Group')
    .map((m) => ctx.uids.get(`Group ${m.namespace}/${m.name}`))
    .filter((uid): uid is string => uid !== undefined);
  const gone: Record<ManifestKind, PlanChange[]> = { RoleBinding: [], Identity: [], Group: [] };
  for (const kind of ['RoleBinding', 'Identity', 'Group'] as const) {
    for (const at of declared) {
      for (const seen of await listSeen(ctx.s, kind, { 'uidp.children_of': at })) {
        const uid = String(seen.item.uid);
        if (ctx.claimed.has(uid) || (kind === 'Identity' && seen.item.staticKeys)) continue;
        gone[kind].push(deleteOf(kind, seen));
      }
    }
  }
  gone.Group.sort((a, b) => b.uid!.length - a.uid!.length);
  ctx.changes.push(...gone.RoleBinding, ...gone.Identity, ...gone.Group);
}

function deleteOf(kind: ManifestKind, seen: Seen): PlanChange {
  const i = seen.item;
  const title =
    kind === 'RoleBinding'
      ? `${String((i.identity as { name?: string }).name)} → ${String((i.role as { name?: string }).name)} at ${String((i.group as { name?: string }).name)}`
      : String(i.name);
  return {
    action: 'delete',
    kind,
    title,
    uid: String(i.uid),
    etag: seen.etag,
    fields: [],
    why: 'pruned: no manifest names it',
  };
}
