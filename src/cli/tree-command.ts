import { call, openSession, type Session } from './api-session.js';
import { resolveUid } from './name-resolver.js';
import { listItems } from './resource-actions.js';
import type { Item } from './resource-kinds.js';

/** What a tree line counts, directly under each group. */
const COUNTED = [
  { path: '/iam/v2beta1/identities', plural: 'identities', one: 'identity', many: 'identities' },
  { path: '/iam/v2beta1/roleBindings', plural: 'roleBindings', one: 'binding', many: 'bindings' },
  { path: '/registry/v2beta1/repos', plural: 'repos', one: 'repo', many: 'repos' },
] as const;

const parentOf = (uid: string) => uid.slice(0, Math.max(0, uid.lastIndexOf('/')));

/** Every visible item of a kind below `root` (or everywhere), counted by its group. */
async function countByGroup(
  s: Session,
  kind: { path: string; plural: string },
  root: string | undefined,
): Promise<Map<string, number>> {
  const query: Record<string, string> = root === undefined ? {} : { 'uidp.descendants_of': root };
  const { items } = await listItems(s, kind, { ...query, page_size: '200' }, true);
  const counts = new Map<string, number>();
  for (const i of items) {
    const g = parentOf(String(i.uid));
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  return counts;
}

/**
 * `arbor tree [GROUP]`: the groups you can see as a tree (below GROUP, or from every
 * organization), each with the identities, role bindings and repos directly in it.
 */
export async function treeCommand(
  named: string | undefined,
  o: { api?: string; uids?: boolean },
): Promise<void> {
  const s = await openSession(o.api);
  const group = named === undefined ? undefined : await resolveUid(s, 'groups', named);
  const [groups, ...counts] = await Promise.all([
    group === undefined
      ? listItems(
          s,
          { path: '/iam/v2beta1/groups', plural: 'groups' },
          { page_size: '200', order_by: 'name' },
          true,
        )
      : Promise.all([
          call<Item>(s, 'GET', '/iam/v2beta1/groups/{uid}', { params: { path: { uid: group } } }),
          listItems(
            s,
            { path: '/iam/v2beta1/groups', plural: 'groups' },
            { 'uidp.descendants_of': group, page_size: '200', order_by: 'name' },
            true,
          ),
        ]).then(([top, below]) => ({ items: [top, ...below.items] })),
    ...COUNTED.map((k) => countByGroup(s, k, group)),
  ]);
  const byUid = new Map(groups.items.map((g) => [String(g.uid), g]));
  const children = new Map<string, Item[]>();
  const roots: Item[] = [];
  for (const g of groups.items) {
    const p = parentOf(String(g.uid));
    if (byUid.has(p)) children.set(p, [...(children.get(p) ?? []), g]);
    else roots.push(g);
  }
  const label = (g: Item) => {
    const uid = String(g.uid);
    const n = COUNTED.map((k, i) => {
      const c = counts[i]!.get(uid) ?? 0;
      return c === 0 ? '' : `${c} ${c === 1 ? k.one : k.many}`;
    }).filter((x) => x !== '');
    const kids = children.get(uid)?.length ?? 0;
    if (kids > 0) n.unshift(`${kids} ${kids === 1 ? 'group' : 'groups'}`);
    const id = o.uids ? `  ${uid}` : '';
    return `${String(g.name)}${id}${n.length > 0 ? `  (${n.join(', ')})` : ''}`;
  };
  const out: string[] = [];
  const walk = (g: Item, prefix: string, last: boolean, top: boolean) => {
    out.push(top ? label(g) : `${prefix}${last ? '└── ' : '├── '}${label(g)}`);
    const kids = children.get(String(g.uid)) ?? [];
    const next = top ? '' : `${prefix}${last ? '    ' : '│   '}`;
    kids.forEach((k, i) => walk(k, next, i === kids.length - 1, false));
  };
  for (const r of roots) walk(r, '', true, true);
  if (out.length === 0) process.stderr.write('No groups found.\n');
  process.stdout.write(out.map((l) => `${l}\n`).join(''));
}
