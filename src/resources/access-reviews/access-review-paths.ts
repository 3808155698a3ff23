import type { Principal } from '../../auth/principal.js';
import type { PathBook } from '../names/path-book.js';
import type { AccessReviewItem } from './access-review.js';

/** `{ [key]: path }` when there is a path, nothing otherwise: a hidden path is left out. */
const field = (key: string, path: string | undefined) =>
  path === undefined ? {} : { [key]: path };

/**
 * Items with the paths of their holder, role and group beside the uids, as far as `p` may
 * list each (one read of names for the page: PathBook), as check and who-can answers show
 * theirs. The holder's and role's names the item carries are its own (as at open). Absent
 * a PathBook, the items as they are.
 */
export async function itemsWithPaths(
  book: PathBook | undefined,
  p: Principal,
  items: AccessReviewItem[],
): Promise<AccessReviewItem[]> {
  if (book === undefined || items.length === 0) return items;
  const paths = await book.of(p, {
    groups: items.map((i) => i.groupUid),
    identities: items.map((i) => i.holder.uid),
    roles: items.map((i) => i.role.uid),
  });
  return items.map((i) => ({
    ...i,
    ...field('holderPath', paths.identity(i.holder.uid)),
    ...field('rolePath', paths.role(i.role.uid)),
    ...field('groupPath', paths.group(i.groupUid)),
  }));
}
