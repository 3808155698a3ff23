import { createHash } from 'node:crypto';
import { stableJson } from '../wire/manifest-spec.js';
import { callForEtag, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import type { NamedRef, PlanChange } from './plan-types.js';

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** A binding change's value of `field` once applied: the new one if it changes, else the old. */
function after(c: PlanChange, field: string): string | undefined {
  if (c.action === 'create') return str(c.body?.[field]);
  const f = c.fields.find((x) => x.field === field);
  return str(f?.to) ?? str(f?.from);
}

/**
 * The roles and identities that the plan's binding creates and updates name by uid: what
 * the access they grant depends on beyond the plan's own writes. A role's capabilities
 * decide what the binding grants; an identity's claim match (or static keys) decides who
 * acts as it. Sorted, each once.
 */
function namedUids(changes: readonly PlanChange[]): Array<{ kind: NamedRef['kind']; uid: string }> {
  const roles = new Set<string>();
  const identities = new Set<string>();
  for (const c of changes) {
    if (c.kind !== 'RoleBinding' || c.action === 'delete') continue;
    const role = after(c, 'roleUid');
    const identity = after(c, 'identityUid');
    if (role) roles.add(role);
    if (identity) identities.add(identity);
  }
  return [
    ...[...roles].sort().map((uid) => ({ kind: 'Role' as const, uid })),
    ...[...identities].sort().map((uid) => ({ kind: 'Identity' as const, uid })),
  ];
}

/**
 * What of a role or identity decides access, and nothing else: not its ETag, which moves
 * with every sign-in of an identity (`lastSeenTime`), so that binding the ETag would refuse
 * every apply of a plan naming an identity in use.
 */
function accessPart(kind: NamedRef['kind'], item: Record<string, unknown>): unknown {
  if (kind === 'Role') {
    const caps = Array.isArray(item.capabilities) ? item.capabilities.map(String) : [];
    return { capabilities: [...caps].sort() };
  }
  return { claimMatch: item.claimMatch, staticKeys: item.staticKeys };
}

const PATH = { Role: '/iam/v2beta1/roles/{uid}', Identity: '/iam/v2beta1/identities/{uid}' };

/**
 * Reads each role and identity the plan's changes name, as the caller sees it, for a
 * digest of what of it decides access (`digest` "not found" for one it cannot see).
 * @throws CliError for a failed call other than NOT_FOUND.
 */
export async function namedRefs(s: Session, changes: readonly PlanChange[]): Promise<NamedRef[]> {
  const out: NamedRef[] = [];
  for (const { kind, uid } of namedUids(changes)) {
    try {
      const { data } = await callForEtag<Record<string, unknown>>(s, 'GET', PATH[kind], {
        params: { path: { uid } },
      });
      const digest = createHash('sha256')
        .update(stableJson(accessPart(kind, data)))
        .digest('base64url')
        .slice(0, 22);
      out.push({ kind, uid, name: str(data.name) ?? uid, digest });
    } catch (e) {
      if (!(e instanceof CliError) || e.exitCode !== EXIT.NOT_FOUND) throw e;
      out.push({ kind, uid, name: uid, digest: 'not found' });
    }
  }
  return out;
}

/**
 * How the roles and identities a plan named differ now, in words: "role deployer
 * 3f2a…/8c1e… was changed (its capabilities)". Empty when none did.
 */
export function refsMoved(before: readonly NamedRef[], now: readonly NamedRef[]): string[] {
  const was = new Map(before.map((r) => [`${r.kind} ${r.uid}`, r]));
  const out: string[] = [];
  for (const r of now) {
    const old = was.get(`${r.kind} ${r.uid}`);
    if (old === undefined || old.digest === r.digest) continue;
    const what = r.kind === 'Role' ? 'its capabilities' : 'who may act as it: claimMatch or keys';
    const how =
      r.digest === 'not found'
        ? 'is gone (or hidden from you)'
        : old.digest === 'not found'
          ? 'appeared'
          : `was changed (${what})`;
    out.push(`${r.kind.toLowerCase()} ${old.name} ${r.uid} ${how}`);
  }
  return out;
}
