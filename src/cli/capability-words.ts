import { CAPABILITIES, isCapability, type Capability } from '../auth/capabilities.js';
import { CliError, EXIT } from './cli-errors.js';

/** The resource of a capability, in words (the catalogue's prefixes). */
const RESOURCES: Readonly<Record<string, string>> = {
  groups: 'groups',
  group_invites: 'group invites',
  roles: 'roles',
  role_bindings: 'role bindings',
  account_associations: 'account associations',
  identity: 'identities',
  identity_providers: 'identity providers',
  repo: 'repos',
  tag: 'tags',
  manifest: 'manifests (push)',
  advisories: 'vulnerability advisories',
  audit: 'audit events',
  subscriptions: 'event subscriptions',
};

const VERBS: Readonly<Record<string, string>> = {
  create: 'create',
  update: 'change',
  list: 'list and read',
  delete: 'delete',
};

/** `groups.create` → `create groups`, at the group it is held at and below. */
export function describeCapability(c: Capability): string {
  if (c === 'repo.blobs.get') return 'pull the blobs of repos (registry pull)';
  const [resource = '', verb = ''] = c.split('.');
  return `${VERBS[verb] ?? verb} ${RESOURCES[resource] ?? resource}`;
}

/** Edit distance (insert, delete, substitute), for "did you mean". */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(
        row[j]! + 1,
        next[j - 1]! + 1,
        row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[b.length]!;
}

/** The known capabilities closest to `s` (a typo, a plural, a missing prefix). */
function closestCapabilities(s: string): Capability[] {
  const scored = CAPABILITIES.map((c) => ({ c, d: distance(s, c) }));
  const best = Math.min(...scored.map((x) => x.d));
  // More than a third of the word changed is a different word, not a typo.
  if (best > Math.max(2, Math.floor(s.length / 3))) {
    const tail = CAPABILITIES.filter((c) => c.endsWith(`.${s}`) || c.startsWith(`${s}.`));
    return tail.slice(0, 4);
  }
  return scored.filter((x) => x.d === best).map((x) => x.c);
}

/** @throws CliError (usage, exit 2) for a name that is no capability, with the nearest. */
export function requireCapability(s: string): Capability {
  if (isCapability(s)) return s;
  const near = closestCapabilities(s);
  throw new CliError(`"${s}" is not a capability`, EXIT.USAGE, [
    ...(near.length > 0 ? [`  did you mean ${near.join(' or ')}?`] : []),
    '  every capability: arbor capabilities',
  ]);
}
