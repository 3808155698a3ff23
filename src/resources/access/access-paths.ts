import type { Principal } from '../../auth/principal.js';
import type { PathBook, Paths } from '../names/path-book.js';
import type { CheckResult, GrantProof, GroupAccess, Holder } from './access.js';

/** `{ [key]: path }` when there is a path, nothing otherwise: a hidden path is left out. */
const field = <K extends string>(key: K, path: string | undefined) =>
  (path === undefined ? {} : { [key]: path }) as Partial<Record<K, string>>;

function proofWith<P extends GrantProof>(paths: Paths, g: P): P {
  return {
    ...g,
    ...field('groupPath', paths.group(g.groupUid)),
    ...field('rolePath', paths.role(g.role.uid)),
  };
}

const proofUids = (gs: readonly GrantProof[]) => ({
  groups: gs.map((g) => g.groupUid),
  roles: gs.map((g) => g.role.uid),
});

/**
 * Answers with the paths of names beside their uids, for people: one read of names for the
 * whole batch or page (PathBook), and only what the caller may see. Absent a PathBook (a
 * service built without one), the answers as they are.
 */
export class AccessPaths {
  constructor(private readonly book: PathBook | undefined) {}

  async checks(p: Principal, rs: CheckResult[]): Promise<CheckResult[]> {
    if (this.book === undefined || rs.length === 0) return rs;
    const proofs = rs.flatMap((r) => [...r.grants, ...r.nearest]);
    const { groups, roles } = proofUids(proofs);
    const paths = await this.book.of(p, {
      groups: [...rs.map((r) => r.groupUid), ...groups],
      identities: rs.map((r) => r.identityUid),
      roles,
    });
    return rs.map((r) => ({
      ...r,
      ...field('identityPath', paths.identity(r.identityUid)),
      ...field('groupPath', paths.group(r.groupUid)),
      grants: r.grants.map((g) => proofWith(paths, g)),
      nearest: r.nearest.map((g) => proofWith(paths, g)),
    }));
  }

  async holders(p: Principal, hs: Holder[]): Promise<Holder[]> {
    if (this.book === undefined || hs.length === 0) return hs;
    const paths = await this.book.of(p, {
      ...proofUids(hs.flatMap((h) => h.grants)),
      identities: hs.map((h) => h.identityUid),
    });
    return hs.map((h) => ({
      ...h,
      ...field('identityPath', paths.identity(h.identityUid)),
      grants: h.grants.map((g) => proofWith(paths, g)),
    }));
  }

  async groups(p: Principal, gs: GroupAccess[]): Promise<GroupAccess[]> {
    if (this.book === undefined || gs.length === 0) return gs;
    const paths = await this.book.of(p, {
      groups: gs.map((g) => g.groupUid),
      roles: gs.flatMap((g) => g.bindings.map((b) => b.role.uid)),
    });
    return gs.map((g) => ({
      ...g,
      ...field('groupPath', paths.group(g.groupUid)),
      bindings: g.bindings.map((b) => ({ ...b, ...field('rolePath', paths.role(b.role.uid)) })),
    }));
  }
}
