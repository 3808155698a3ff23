import { CAPABILITIES } from '../auth/capabilities.js';
import { parentOf } from '../core/uidp.js';
import { openSession } from './api-session.js';
import { describeCapability } from './capability-words.js';
import { listItems } from './resource-actions.js';
import { kindOf, type Item } from './resource-kinds.js';

/** Kinds whose names completion offers: the ones typed where a uid is taken. */
const COMPLETED = new Set(['groups', 'identities', 'roles']);

/**
 * Every listed group's path of names, as the CLI and the API take it: from where the
 * caller's view of the tree starts (a group whose parent is not in the list).
 */
function groupPaths(groups: readonly Item[]): Map<string, string> {
  const byUid = new Map(groups.map((g) => [String(g.uid), g]));
  const paths = new Map<string, string>();
  const pathOf = (uid: string): string => {
    const known = paths.get(uid);
    if (known !== undefined) return known;
    const parent = parentOf(uid);
    const name = byUid.get(uid)?.name;
    const own = typeof name === 'string' ? name : '';
    const p = parent !== undefined && byUid.has(parent) ? `${pathOf(parent)}/${own}` : own;
    paths.set(uid, p);
    return p;
  };
  for (const uid of byUid.keys()) pathOf(uid);
  return paths;
}

const described = (item: Item, fallback: string) =>
  typeof item.description === 'string' && item.description !== '' ? item.description : fallback;

/**
 * `arbor __complete <kind>`: the names of one page (200) of a kind, one a line, each with a
 * tab and a description, for the completion scripts: group paths (`acme/platform`),
 * identities by group path and name, role names. One List (two at once for identities and
 * roles, whose groups give the paths); `capabilities` from the program itself. Silent and successful on any failure: completion
 * must never print an error into the person's command line.
 */
export async function completeUids(command: string): Promise<void> {
  // Capabilities are the program's own words: no server asked.
  if (command === 'capabilities') {
    process.stdout.write(CAPABILITIES.map((c) => `${c}\t${describeCapability(c)}\n`).join(''));
    return;
  }
  if (!COMPLETED.has(command)) return;
  try {
    const s = await openSession();
    const page = { page_size: '200' };
    const groupsKind = kindOf('groups')!;
    const [groups, items] = await Promise.all([
      listItems(s, groupsKind, page, false),
      command === 'groups' ? undefined : listItems(s, kindOf(command)!, page, false),
    ]);
    const paths = groupPaths(groups.items);
    const lines: string[] = [];
    if (command === 'groups')
      for (const g of groups.items)
        lines.push(`${paths.get(String(g.uid))}\t${described(g, 'group')}`);
    for (const i of items?.items ?? []) {
      const parent = parentOf(String(i.uid));
      const at = parent === undefined ? undefined : paths.get(parent);
      if (command === 'identities') {
        if (at !== undefined) lines.push(`${at}/${String(i.name)}\t${described(i, 'identity')}`);
      } else {
        const where = parent === undefined ? '' : `, defined at ${at ?? parent}`;
        lines.push(`${String(i.name)}\t${described(i, 'role')}${where}`);
      }
    }
    process.stdout.write(lines.map((l) => `${l}\n`).join(''));
  } catch {
    /* no server, no token: no suggestions */
  }
}
