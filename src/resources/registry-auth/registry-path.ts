import { isValidUidp } from '../../core/uidp.js';
import { REPO_NAME_MAX, REPO_NAME_PATTERN } from '../repos/repo.js';

/**
 * Where a registry repository lives in Arbor. The registry path is the group's uid path
 * followed by the repo's name: `<org uid>/<repo>` for a repo in an organization,
 * `<org uid>/<child id>/…/<repo>` for one in a folder below it. Uids, not names, because
 * group names are neither unique nor stable: a rename must never point a path at
 * another group's images. Every component is a valid OCI path component.
 */
export interface RegistryPath {
  groupUid: string;
  repoName: string;
}

/** Parse a registry repository name. @returns undefined for anything that is not one. */
export function parseRegistryPath(path: string): RegistryPath | undefined {
  if (path.length > 1024) return undefined;
  const cut = path.lastIndexOf('/');
  if (cut <= 0) return undefined;
  const groupUid = path.slice(0, cut);
  const repoName = path.slice(cut + 1);
  if (!isValidUidp(groupUid)) return undefined;
  if (repoName.length > REPO_NAME_MAX || !REPO_NAME_PATTERN.test(repoName)) return undefined;
  return { groupUid, repoName };
}
