/**
 * Which rows a caller may see: everything, or the subtrees (inclusive) of some groups.
 * Computed by the authorizer for every page; a page token never widens it. It lives in
 * core/ because both the authorizer (auth/) and the services and stores that filter by it
 * (resources/, db/) read it, and auth/ knows no resources.
 */
export type Visibility = { kind: 'all' } | { kind: 'scopes'; scopes: readonly string[] };
