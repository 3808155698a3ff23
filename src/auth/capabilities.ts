/**
 * The capability catalogue. Each operation of each resource needs one of these at a
 * group; a role is a set of them. Names follow the platform API the spec models.
 */
export const CAPABILITIES = [
  'groups.create',
  'groups.update',
  'groups.list',
  'groups.delete',
  'group_invites.create',
  'group_invites.list',
  'group_invites.delete',
  'roles.create',
  'roles.update',
  'roles.list',
  'roles.delete',
  'role_bindings.create',
  'role_bindings.update',
  'role_bindings.list',
  'role_bindings.delete',
  'account_associations.create',
  'account_associations.update',
  'account_associations.list',
  'account_associations.delete',
  'identity.create',
  'identity.update',
  'identity.list',
  'identity.delete',
  'identity_providers.create',
  'identity_providers.update',
  'identity_providers.list',
  'identity_providers.delete',
  'repo.create',
  'repo.update',
  'repo.list',
  'repo.delete',
  'repo.blobs.get',
  'tag.create',
  'tag.update',
  'tag.list',
  'tag.delete',
  'manifest.create',
  'manifest.update',
  'manifest.list',
  'manifest.delete',
  'advisories.list',
  'audit.list',
  'subscriptions.create',
  'subscriptions.update',
  'subscriptions.list',
  'subscriptions.delete',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

const known = new Set<string>(CAPABILITIES);

export function isCapability(s: string): s is Capability {
  return known.has(s);
}
