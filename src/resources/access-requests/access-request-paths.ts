import { systemPrincipal, type Principal } from '../../auth/principal.js';
import type { PathBook } from '../names/path-book.js';
import type { AccessRequest } from './access-request.js';

/**
 * Reads the names of a request's requester and role for a caller who may approve it: the
 * request itself names them to that caller, so their full paths (from the organization
 * down) are shown whatever the caller may list. Nothing else is read with it.
 */
const NAMER = systemPrincipal('access-request-names', { door: 'system' });

/**
 * Requests with the paths of their group, requester and role, as far as `p` may see them:
 * one read of names for the page (PathBook). A request whose requester or role `p` may not
 * list, but which `p` may approve (`approvable`: the approve call's own check), shows the
 * requester's and the role's full paths from the organization: whoever decides a request
 * must know by name who asks for what. Absent a PathBook, the requests as they are.
 */
export async function withPaths(
  book: PathBook | undefined,
  p: Principal,
  rs: AccessRequest[],
  approvable?: (r: AccessRequest) => Promise<boolean>,
): Promise<AccessRequest[]> {
  if (book === undefined || rs.length === 0) return rs;
  const paths = await book.of(p, {
    groups: rs.map((r) => r.parentUid),
    identities: rs.map((r) => r.requesterUid),
    roles: rs.map((r) => r.roleUid),
  });
  const unnamed = rs.filter(
    (r) => paths.identity(r.requesterUid) === undefined || paths.role(r.roleUid) === undefined,
  );
  // At most one approval check per request of the page (the page's size bounds it).
  const decided =
    approvable === undefined
      ? []
      : (
          await Promise.all(unnamed.map(async (r) => ((await approvable(r)) ? r : undefined)))
        ).filter((r): r is AccessRequest => r !== undefined);
  const approver = new Set(decided.map((r) => r.uid));
  const full =
    decided.length === 0
      ? undefined
      : await book.of(NAMER, {
          identities: decided.map((r) => r.requesterUid),
          roles: decided.map((r) => r.roleUid),
        });
  const field = (key: string, path: string | undefined) =>
    path === undefined ? {} : { [key]: path };
  const named = (r: AccessRequest, mine: string | undefined, whole: () => string | undefined) =>
    mine ?? (approver.has(r.uid) ? whole() : undefined);
  return rs.map((r) => ({
    ...r,
    ...field('groupPath', paths.group(r.parentUid)),
    ...field(
      'requesterPath',
      named(r, paths.identity(r.requesterUid), () => full?.identity(r.requesterUid)),
    ),
    ...field(
      'rolePath',
      named(r, paths.role(r.roleUid), () => full?.role(r.roleUid)),
    ),
  }));
}
