import { ancestorsOf } from './uidp.js';

/**
 * Which rows a caller may see: everything, or the subtrees (inclusive) of some groups.
 * Computed by the authorizer for every page; a page token never widens it. It lives in
 * core/ because both the authorizer (auth/) and the services and stores that filter by it
 * (resources/, db/) read it, and auth/ knows no resources.
 */
export type Visibility = { kind: 'all' } | { kind: 'scopes'; scopes: readonly string[] };

/**
 * The topmost of some scopes: those with no other scope above them. Under a visibility of
 * scopes, these are the groups a caller sees whose parent it does not see (a group is
 * visible when it is one of the scopes or below one): where what it may see begins.
 */
export function topmostScopes(scopes: readonly string[]): string[] {
  const all = new Set(scopes);
  return [...all].filter((s) => !ancestorsOf(s).some((a) => all.has(a)));
}
