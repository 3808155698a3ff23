import { randomBytes } from 'node:crypto';

/**
 * uid paths: a root is 40 lowercase hex characters, every level below adds `/` and
 * 16 lowercase hex characters. A uid never changes, so nothing ever moves in the tree.
 */
export const UIDP_PATTERN = /^[0-9a-f]{40}(?:\/[0-9a-f]{16})*$/;
const ROOT = /^[0-9a-f]{40}$/;

export function isValidUidp(uid: string): boolean {
  return UIDP_PATTERN.test(uid);
}

export function isRootUid(uid: string): boolean {
  return ROOT.test(uid);
}

export function newRootUid(): string {
  return randomBytes(20).toString('hex');
}

export function newChildUid(parent: string): string {
  return `${parent}/${randomBytes(8).toString('hex')}`;
}

/** The parent of a uid path, or undefined for a root. */
export function parentOf(uid: string): string | undefined {
  const i = uid.lastIndexOf('/');
  return i < 0 ? undefined : uid.slice(0, i);
}

/** Ancestors nearest first, excluding the uid itself. */
export function ancestorsOf(uid: string): string[] {
  const out: string[] = [];
  for (let p = parentOf(uid); p !== undefined; p = parentOf(p)) out.push(p);
  return out;
}

/** The uid itself followed by its ancestors, nearest first. */
export function ancestryOf(uid: string): string[] {
  return [uid, ...ancestorsOf(uid)];
}

/** Strictly below: `a/b` is below `a`; `a2` is not below `a`. */
export function isStrictlyBelow(ancestor: string, uid: string): boolean {
  return uid.startsWith(ancestor + '/');
}

export function isSelfOrBelow(ancestor: string, uid: string): boolean {
  return uid === ancestor || isStrictlyBelow(ancestor, uid);
}
