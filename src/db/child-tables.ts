/**
 * Every table whose rows hang directly under a group through `parent_uid`, with the
 * plural name used in "cannot delete group with child …". A resource kind added under
 * groups is added here, and group delete refuses while any row remains.
 */
export const GROUP_CHILD_TABLES: ReadonlyArray<{ table: string; kind: string }> = [
  { table: 'groups', kind: 'groups' },
  { table: 'identities', kind: 'identities' },
  { table: 'roles', kind: 'roles' },
  { table: 'role_bindings', kind: 'role bindings' },
  { table: 'repos', kind: 'repos' },
  { table: 'identity_providers', kind: 'identity providers' },
  { table: 'group_invites', kind: 'group invites' },
  // @child-tables (append one line per table whose parent_uid may be a group)
];
