import { createHash } from 'node:crypto';
import { CAPABILITIES, isCapability, type Capability } from '../../auth/capabilities.js';

/**
 * The built-in roles: the one definition read by the migration that seeds them
 * (`db/migrations/0002-iam.ts`) and by the tests that check them.
 *
 * Built-ins live at the root (`parent_uid IS NULL`) with flat, deterministic uids, so
 * every installation gives `viewer` the same uid and clients may hard-code it. Changing a
 * capability set here changes what a *fresh* database is seeded with; an existing
 * database only follows through a new migration that calls `upsertBuiltinRoles` again
 * (merged migrations are never edited, so write a new one whenever this file changes).
 */
export interface BuiltinRole {
  readonly uid: string;
  readonly name: string;
  readonly description: string;
  readonly capabilities: readonly Capability[];
}

/** sha1 of `arbor-builtin-role:<name>`: 40 lowercase hex characters, stable forever. */
export function builtinRoleUid(name: string): string {
  return createHash('sha1').update(`arbor-builtin-role:${name}`).digest('hex');
}

/** Deduplicated, in catalogue order: the canonical form every role's capabilities take. */
export function canonicalCapabilities(caps: Iterable<string>): Capability[] {
  const want = new Set(caps);
  return CAPABILITIES.filter((c) => want.has(c));
}

/** Create, update and delete on every IAM resource (whichever of them the catalogue has). */
const IAM_RESOURCES = [
  'groups',
  'group_invites',
  'roles',
  'role_bindings',
  'account_associations',
  'identity',
  'identity_providers',
];
const IAM_WRITES = IAM_RESOURCES.flatMap((r) =>
  ['create', 'update', 'delete'].map((v) => `${r}.${v}`),
).filter(isCapability);

const writes = (...resources: string[]): Capability[] =>
  resources.flatMap((r) => [`${r}.create`, `${r}.update`, `${r}.delete`]).filter(isCapability);

/**
 * Lists only an owner may read: the audit trail (who changed what, through which token)
 * and event subscriptions (their sinks name the owner's infrastructure).
 */
export const OWNER_ONLY_LISTS: readonly Capability[] = ['audit.list', 'subscriptions.list'];

const VIEWER = [
  ...CAPABILITIES.filter((c) => c.endsWith('.list') && !OWNER_ONLY_LISTS.includes(c)),
  'repo.blobs.get',
] as const;
const EDITOR = [...VIEWER, ...writes('repo', 'tag', 'manifest')];
const OWNER = [...EDITOR, ...IAM_WRITES, ...OWNER_ONLY_LISTS, ...writes('subscriptions')];
const REGISTRY_PULL = ['repo.blobs.get', 'groups.list', 'repo.list', 'manifest.list', 'tag.list'];
const REGISTRY_PUSH = [...REGISTRY_PULL, ...writes('repo', 'manifest', 'tag'), 'groups.create'];

function role(name: string, title: string, caps: readonly string[]): BuiltinRole {
  return Object.freeze({
    uid: builtinRoleUid(name),
    name,
    description: `${title} Role (built-in)`,
    capabilities: Object.freeze(canonicalCapabilities(caps)),
  });
}

export const BUILTIN_ROLES: readonly BuiltinRole[] = Object.freeze([
  role('viewer', 'Viewer', VIEWER),
  role('editor', 'Editor', EDITOR),
  role('owner', 'Owner', OWNER),
  role('registry.pull', 'Registry Pull', REGISTRY_PULL),
  role('registry.push', 'Registry Push', REGISTRY_PUSH),
]);

/** The built-in named `name`. @throws Error when there is none (a programming error). */
export function builtinRole(name: string): BuiltinRole {
  const r = BUILTIN_ROLES.find((b) => b.name === name);
  if (!r) throw new Error(`no built-in role ${name}`);
  return r;
}
