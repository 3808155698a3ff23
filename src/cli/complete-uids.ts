import { openSession } from './api-session.js';
import { listItems } from './resource-actions.js';
import { kindOf } from './resource-kinds.js';

/** Kinds whose uids completion offers: few enough to list in one page, and typed often. */
const COMPLETED = new Set(['groups', 'roles']);

/**
 * `arbor __complete <kind>`: the uids of one page (200) of a kind, one a line, for the
 * completion script. Silent and successful on any failure: completion must never print
 * an error into the person's command line.
 */
export async function completeUids(command: string): Promise<void> {
  const kind = kindOf(command);
  if (!kind || !COMPLETED.has(command)) return;
  try {
    const s = await openSession();
    const { items } = await listItems(s, kind, { page_size: '200' }, false);
    process.stdout.write(items.map((i) => `${String(i.uid)}\n`).join(''));
  } catch {
    /* no server, no token: no suggestions */
  }
}
