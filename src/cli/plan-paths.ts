import type { Session } from './api-session.js';
import { NameBook } from './name-book.js';
import type { Plan } from './plan-types.js';

/** Paths of names by uid, for a plan's text: where it would create, what it would change. */
export type PlanPaths = ReadonlyMap<string, string>;

/**
 * The paths of the uids a plan's lines would show: each create's parent group, and each
 * update's or delete's group or identity, or the group a binding is at (`acme/platform/ci`).
 * Read through the Gets (NameBook), so a uid the caller may not read keeps its short form;
 * once per uid. A printing concern only: the plan and its token stay in uids.
 */
export async function planPaths(s: Session, plan: Plan): Promise<PlanPaths> {
  const names = new NameBook(s);
  const out = new Map<string, string>();
  for (const c of plan.changes) {
    if (c.action === 'create') {
      if (c.parentUid && !out.has(c.parentUid))
        out.set(c.parentUid, await names.groupPath(c.parentUid));
      continue;
    }
    if (!c.uid || out.has(c.uid)) continue;
    if (c.kind === 'Group') out.set(c.uid, await names.groupPath(c.uid));
    else if (c.kind === 'Identity') out.set(c.uid, await names.identityPath(c.uid));
    // A binding has no name (its title says who and what): where it is bound.
    else out.set(c.uid, `at ${await names.groupPath(c.uid.slice(0, c.uid.lastIndexOf('/')))}`);
  }
  return out;
}
