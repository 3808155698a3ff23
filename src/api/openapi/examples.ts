import { builtinRoleUid } from '../../resources/roles/builtin-roles.js';
import type { ResourceExamples } from './crud-operations.js';

/**
 * The document's examples describe one small world: an organization with a folder, an
 * identity, a role, a binding, a repo with a tag, an identity provider, an invite and a
 * subscription. Their uids below are stand-ins; a reader substitutes real ones, and the
 * examples test (test/integration/openapi.test.ts) creates each resource on a fresh server
 * and replaces every stand-in (anywhere in a string) by the real uid before sending the
 * example. Built-in role uids are real everywhere. Every name is distinct, so all the
 * examples can be sent to one server.
 */
const ORG = '6f1ed002ab5595859014ebf0951522d9f8b4c3a1';
const REPO = `${ORG}/4b5c6d7e8f901a2b`;
const INVITE = `${ORG}/3f2e1d0c9b8a7f6e`;

export const EXAMPLE_UIDS = {
  org: ORG,
  folder: `${ORG}/1a2b3c4d5e6f7081`,
  identity: `${ORG}/9c8b7a6f5e4d3c2b`,
  role: `${ORG}/2d4f6a8c0e1b3d5f`,
  roleBinding: `${ORG}/7e6d5c4b3a291807`,
  repo: REPO,
  tag: `${REPO}/5c6d7e8f9a0b1c2d`,
  identityProvider: `${ORG}/8a9b0c1d2e3f4a5b`,
  invite: INVITE,
  subscription: `${ORG}/0f1e2d3c4b5a6978`,
} as const;

/**
 * Paths of names in the examples: the folder and the identity above, by name. The examples
 * test replaces them by the paths of the resources it creates, as it does the uids.
 */
export const EXAMPLE_PATHS = { folder: 'acme/platform', identity: 'acme/ci' } as const;

/** The one-time code of the example invite (shown only when it was created). */
export const EXAMPLE_INVITE_CODE = `${Buffer.from(INVITE).toString('base64url')}.${'Q'.repeat(43)}`;

/** Arbor's address (`ARBOR_ISSUER_URL`): the audience the STS wants. */
export const EXAMPLE_API_URL = 'https://arbor.example.com';

/** The registry service name (`ARBOR_REGISTRY_SERVICE`). */
export const EXAMPLE_REGISTRY_SERVICE = 'registry.example.com';

export const VIEWER = builtinRoleUid('viewer');
const EDITOR = builtinRoleUid('editor');
const OWNER = builtinRoleUid('owner');

const U = EXAMPLE_UIDS;
const CLAIM_MATCH = { issuer: 'https://token.actions.githubusercontent.com' };
const list = { page_size: 20, 'uidp.descendants_of': ORG };

/** Request examples of each kind, v2 and v1, keyed by the collection. */
export const EXAMPLES: Readonly<Record<string, ResourceExamples>> = {
  groups: {
    uid: U.folder,
    parent: U.org,
    createRoot: { name: 'acme', description: 'Acme Inc.' },
    create: { name: 'platform', description: 'The platform team' },
    update: { description: 'Platform engineering' },
    updateMask: 'description',
    list: { ...list, order_by: 'name desc' },
  },
  'v1/groups': {
    uid: U.folder,
    parent: U.org,
    createRoot: { name: 'acme-legacy', description: 'Acme Inc. (v1)' },
    create: { name: 'platform-legacy' },
    update: { name: 'platform-team', description: 'Replaced through v1' },
    list: { 'uidp.children_of': ORG },
  },
  identities: {
    uid: U.identity,
    parent: U.org,
    create: {
      name: 'ci',
      description: 'Deploys from the main branch',
      claimMatch: { ...CLAIM_MATCH, subjectPattern: 'repo:acme/.*:ref:refs/heads/main' },
    },
    update: { description: 'Deploys from main' },
    updateMask: 'description',
    list: { ...list, order_by: 'created_at desc', name: 'ci' },
  },
  'v1/identities': {
    uid: U.identity,
    parent: U.org,
    create: { name: 'ci-legacy', claimMatch: { ...CLAIM_MATCH, subject: 'repo:acme/app' } },
    update: { name: 'deploy-bot', claimMatch: { ...CLAIM_MATCH, subject: 'repo:acme/deploy' } },
    list: { 'uidp.children_of': ORG },
  },
  roles: {
    uid: U.role,
    parent: U.org,
    create: { name: 'auditor', capabilities: ['groups.list', 'identity.list'] },
    update: { description: 'Reads the tree' },
    updateMask: 'description',
    list: { page_size: 20, order_by: 'name', name: 'viewer' },
  },
  'v1/roles': {
    uid: U.role,
    parent: U.org,
    create: { name: 'auditor-legacy', capabilities: ['groups.list'] },
    update: { name: 'reader', capabilities: ['groups.list', 'repo.list'] },
    list: { 'uidp.children_of': ORG },
  },
  roleBindings: {
    uid: U.roleBinding,
    parent: U.org,
    create: { identityUid: U.identity, roleUid: VIEWER },
    update: { roleUid: OWNER },
    updateMask: 'roleUid',
    list: { ...list, identity: U.identity },
  },
  'v1/rolebindings': {
    uid: U.roleBinding,
    parent: U.org,
    create: { identity: U.identity, role: EDITOR },
    update: { identity: U.identity, role: U.role },
    list: { 'uidp.children_of': ORG },
  },
  repos: {
    uid: U.repo,
    parent: U.org,
    create: { name: 'app', description: 'The application image' },
    update: { description: 'The app image' },
    updateMask: 'description',
    list: { ...list, order_by: 'name' },
  },
  'v1/repos': { uid: U.repo, list: { 'uidp.children_of': ORG } },
  tags: {
    uid: U.tag,
    parent: U.repo,
    create: { name: 'v1.2.3', digest: `sha256:${'ab'.repeat(32)}` },
    list: { ...list, order_by: 'updated_at desc' },
  },
  advisories: { list: { page_size: 20, order_by: 'modified desc', ecosystem: 'npm' } },
  identityProviders: {
    uid: U.identityProvider,
    parent: U.org,
    create: {
      name: 'corp-sso',
      description: 'The company directory',
      defaultRole: VIEWER,
      oidc: {
        issuer: 'https://accounts.example.com',
        clientId: 'arbor',
        clientSecret: 'a-client-secret-from-the-provider',
        additionalScopes: ['groups'],
      },
    },
    update: { description: 'SSO for employees' },
    updateMask: 'description',
    list: { ...list, name: 'corp-sso' },
  },
  'v1/identityProviders': {
    uid: U.identityProvider,
    parent: U.org,
    create: {
      name: 'partner-sso',
      defaultRole: VIEWER,
      oidc: { issuer: 'https://login.partner.example', clientId: 'arbor', pkceEnabled: true },
    },
    update: {
      name: 'staff-sso',
      defaultRole: VIEWER,
      oidc: { issuer: 'https://accounts.example.com', clientId: 'arbor-staff', pkceEnabled: true },
    },
    list: { 'uidp.children_of': ORG },
  },
  accountAssociations: {
    uid: U.folder,
    parent: U.folder,
    create: { name: 'platform-clouds', amazon: { account: '123456789012' } },
    update: { google: { projectId: 'acme-platform' } },
    updateMask: 'google',
    list: { ...list, order_by: 'group' },
  },
  'v1/account_associations': {
    uid: U.org,
    parent: U.org,
    create: { name: 'acme-clouds', google: { projectNumber: '123456789' } },
    update: { name: 'acme-clouds', amazon: { account: '210987654321' } },
    list: { group: ORG },
  },
  groupInvites: {
    uid: U.invite,
    parent: U.org,
    create: { roleUid: VIEWER, ttl: '168h', singleUse: true },
    update: { roleUid: EDITOR },
    updateMask: 'roleUid',
    list: { page_size: 20, group: ORG },
  },
  'v1/group_invites': {
    uid: U.invite,
    parent: U.org,
    create: { role: VIEWER, ttl: '72h', email: 'new.hire@example.com' },
    list: { group: ORG },
  },
  // Create is asked by an identity's own token, which the examples test does not hold.
  accessRequests: { list: { page_size: 20, state: 'PENDING' } },
  // A review's due time moves with the clock; its Create is shown in docs/access-reviews.md.
  accessReviews: { list: { page_size: 20, state: 'OPEN' } },
  events: { list: { ...list, operation: 'update', resource_type: 'iam.arbor.dev/Group' } },
  subscriptions: {
    uid: U.subscription,
    parent: U.org,
    create: {
      name: 'siem',
      sink: 'https://siem.example.com/arbor',
      types: ['dev.arbor.iam.*'],
    },
    update: { types: ['dev.arbor.iam.*', 'dev.arbor.registry.*'] },
    updateMask: 'types',
    list: { ...list, name: 'siem' },
  },
};

/** The examples of the collection at `path` (`/iam/v1/groups` → `v1/groups`). */
export function examplesFor(path: string): ResourceExamples {
  const [, , version, collection] = path.split('/');
  const found = EXAMPLES[version === 'v1' ? `v1/${collection}` : (collection ?? '')];
  if (!found) throw new Error(`no examples for ${path}`);
  return found;
}
