import type { Principal } from '../../auth/principal.js';
import type { PathBook } from '../names/path-book.js';
import type { AccessRequest } from './access-request.js';

/**
 * Requests with the paths of their group, requester and role, as far as `p` may see them:
 * one read of names for the page (PathBook). Absent a PathBook, the requests as they are.
 */
export async function withPaths(
  book: PathBook | undefined,
  p: Principal,
  rs: AccessRequest[],
): Promise<AccessRequest[]> {
  if (book === undefined || rs.length === 0) return rs;
  const paths = await book.of(p, {
    groups: rs.map((r) => r.parentUid),
    identities: rs.map((r) => r.requesterUid),
    roles: rs.map((r) => r.roleUid),
  });
  const field = (key: string, path: string | undefined) =>
    path === undefined ? {} : { [key]: path };
  return rs.map((r) => ({
    ...r,
    ...field('groupPath', paths.group(r.parentUid)),
    ...field('requesterPath', paths.identity(r.requesterUid)),
    ...field('rolePath', paths.role(r.roleUid)),
  }));
}
