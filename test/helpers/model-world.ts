import fc from 'fast-check';
import type { Capability } from '../../src/auth/capabilities.js';
import { ADMIN } from '../../src/auth/principal.js';
import { placementViolations } from '../../src/resources/role-bindings/role-binding-input.js';
import { BUILTIN_ROLES } from '../../src/resources/roles/builtin-roles.js';
import type { ModelBinding, ModelWorld } from './access-model.js';
import { ISSUER } from './iam-fixtures.js';
import type { TestServer } from './server.js';

/**
 * Random worlds for the access property tests, built for real through the services as the
 * admin: organizations, a tree of groups under them, identities, custom roles defined at
 * any group (below the root too, so a binding above its role is refused for placement),
 * the built-in roles, and bindings with every kind of window.
 */
export interface WorldShape {
  /** Organizations (at least one). */
  orgs: number;
  /** Each further group's parent, an index into the groups made before it. */
  parents: number[];
  /** Each identity's group, an index. */
  identityAt: number[];
  /** Each custom role's group (an index; 0 is the first organization) and capabilities. */
  roles: { at: number; caps: Capability[] }[];
  bindings: { identity: number; role: number; group: number; window: Window }[];
}

/**
 * A binding's window relative to now: none, ended (expireTime passed), scheduled (notBefore
 * an hour ahead), started (notBefore passed, expiring in an hour), or scheduled and ending.
 */
export type Window = 'always' | 'ended' | 'scheduled' | 'started' | 'scheduledEnding';
export const WINDOWS: Window[] = ['always', 'ended', 'scheduled', 'started', 'scheduledEnding'];

export interface WorldSize {
  orgs: number;
  groups: number;
  identities: number;
  roles: number;
  bindings: number;
  /** Whether custom roles may be defined below the first organization's root. */
  rolesBelowRoot: boolean;
  /** The windows bindings are drawn from (repeat one to weigh it); default: each once. */
  windows?: Window[];
}

/** Shapes of at most `size`. */
/** The capabilities the model tests draw roles from: a few that decide sight and binding. */
export const MODEL_POOL: Capability[] = [
  'groups.list',
  'identity.list',
  'role_bindings.list',
  'role_bindings.create',
  'roles.list',
  'repo.list',
];

/**
 * The worlds the reference models know: one organization, custom roles at its root, roles
 * drawn from MODEL_POOL (the real-apply test draws wider worlds with `worldArb`).
 */
export function modelWorldArb(
  size: Omit<WorldSize, 'orgs' | 'rolesBelowRoot'>,
): fc.Arbitrary<WorldShape> {
  return worldArb(MODEL_POOL, { ...size, orgs: 1, rolesBelowRoot: false });
}

export function worldArb(pool: readonly Capability[], size: WorldSize): fc.Arbitrary<WorldShape> {
  return fc.record({
    orgs: fc.integer({ min: 1, max: size.orgs }),
    parents: fc.array(fc.nat(), { minLength: 1, maxLength: size.groups }),
    identityAt: fc.array(fc.nat(), { minLength: 2, maxLength: size.identities }),
    roles: fc.array(
      fc.record({
        at: size.rolesBelowRoot ? fc.nat() : fc.constant(0),
        caps: fc.subarray([...pool], { minLength: 1 }),
      }),
      { minLength: 1, maxLength: size.roles },
    ),
    bindings: fc.array(
      fc.record({
        identity: fc.nat(),
        role: fc.nat(),
        group: fc.nat(),
        window: fc.constantFrom(...(size.windows ?? WINDOWS)),
      }),
      { maxLength: size.bindings },
    ),
  });
}

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** The create fields of a window; `ended` is made to expire later, then moved into the past. */
function windowOf(w: Window, now: number): { notBefore?: string; expireTime?: string } {
  switch (w) {
    case 'always':
      return {};
    case 'ended':
      return { expireTime: iso(now + HOUR) };
    case 'scheduled':
      return { notBefore: iso(now + HOUR) };
    case 'started':
      return { notBefore: iso(now - HOUR), expireTime: iso(now + HOUR) };
    case 'scheduledEnding':
      return { notBefore: iso(now + HOUR), expireTime: iso(now + 2 * HOUR) };
  }
}

let worldNo = 0;

/**
 * Build `shape` through `s`'s services as the admin; answer the model of what was built.
 * A binding the services would refuse for its placement, or a second of the same
 * (group, identity, role), is left out.
 */
export async function buildWorld(
  s: TestServer,
  shape: WorldShape,
  prefix: string,
): Promise<ModelWorld> {
  const sv = s.arbor.services;
  const n = worldNo++;
  const groups: string[] = [];
  for (let i = 0; i < shape.orgs; i++)
    groups.push((await sv.groups.create(ADMIN, undefined, { name: `${prefix}-${n}-${i}` })).uid);
  for (const [i, p] of shape.parents.entries())
    groups.push((await sv.groups.create(ADMIN, groups[p % groups.length], { name: `g${i}` })).uid);
  const identities: string[] = [];
  for (const [i, at] of shape.identityAt.entries()) {
    const body = { name: `i${i}`, claimMatch: { issuer: ISSUER, subject: `${prefix}${n}-${i}` } };
    identities.push((await sv.identities.create(ADMIN, groups[at % groups.length], body)).uid);
  }
  const roles = new Map<string, ReadonlySet<Capability>>();
  const roleUids: string[] = [];
  for (const [i, r] of shape.roles.entries()) {
    const at = groups[r.at % groups.length]!;
    const uid = (await sv.roles.create(ADMIN, at, { name: `r${i}`, capabilities: r.caps })).uid;
    roles.set(uid, new Set(r.caps));
    roleUids.push(uid);
  }
  // The built-in roles are bound too, as people mostly bind them.
  for (const r of BUILTIN_ROLES) {
    roles.set(r.uid, new Set(r.capabilities));
    roleUids.push(r.uid);
  }
  const bindings: ModelBinding[] = [];
  const seen = new Set<string>();
  for (const b of shape.bindings) {
    const identity = identities[b.identity % identities.length]!;
    const role = roleUids[b.role % roleUids.length]!;
    const group = groups[b.group % groups.length]!;
    const key = `${group} ${identity} ${role}`;
    if (seen.has(key) || placementViolations(group, identity, role).length > 0) continue;
    seen.add(key);
    const made = await sv.roleBindings.create(ADMIN, group, {
      identityUid: identity,
      roleUid: role,
      ...windowOf(b.window, Date.now()),
    });
    const uid = made.uid;
    // As time would: the expiry passes.
    if (b.window === 'ended')
      await s.db
        .knex('role_bindings')
        .where({ uid })
        .update({ expire_time: new Date(0) });
    bindings.push({
      uid,
      group,
      identity,
      role,
      caps: roles.get(role)!,
      ...(made.notBefore ? { start: made.notBefore.getTime() } : {}),
      ...(b.window === 'ended'
        ? { end: 0 }
        : made.expireTime
          ? { end: made.expireTime.getTime() }
          : {}),
    });
  }
  // The SQL above went round the services: forget remembered grants.
  s.arbor.authz.grantsChanged();
  const builtin = new Set(BUILTIN_ROLES.map((r) => r.uid));
  return { groups, identities, roles, builtin, roleGroup: groups[0]!, bindings };
}
