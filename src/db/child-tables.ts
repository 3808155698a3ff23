/**
 * Every table whose rows hang under a group, with the plural name used in "cannot delete
 * group with child …" and the column that names the group (`parent_uid` unless said).
 * A resource kind added under groups is added here, and group delete refuses while any
 * row remains. (Foreign keys with ON DELETE RESTRICT back this up against races.)
 */
export const GROUP_CHILD_TABLES: ReadonlyArray<{ table: string; kind: string; column?: string }> = [
  { table: 'groups', kind: 'groups' },
  { table: 'identities', kind: 'identities' },
  { table: 'roles', kind: 'roles' },
  { table: 'role_bindings', kind: 'role bindings' },
  { table: 'repos', kind: 'repos' },
  { table: 'identity_providers', kind: 'identity providers' },
  { table: 'group_invites', kind: 'group invites' },
  { table: 'subscriptions', kind: 'subscriptions' },
  // An account association's uid is its group's uid.
  { table: 'account_associations', kind: 'account associations', column: 'uid' },
];
