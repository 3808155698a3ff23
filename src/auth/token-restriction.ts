import { isSelfOrBelow } from '../core/uidp.js';
import type { Grant } from './grant.js';
import type { TokenRestriction } from './principal.js';

/**
 * The grants a down-scoped token leaves of `grants`: each grant keeps only the capabilities
 * in the token's scope, and only the part of its subtree inside one of the token's
 * resources (a grant above a resource holds from the resource down; one at or below it is
 * kept as it is; one beside it is dropped). Never more than `grants`: every result is a
 * subset of a grant it came from, in capabilities and in subtree.
 */
export function restrictGrants(grants: readonly Grant[], r: TokenRestriction): Grant[] {
  const out: Grant[] = [];
  for (const g of grants) {
    const caps = r.scope === undefined ? g.capabilities : intersect(g.capabilities, r.scope);
    if (caps.size === 0) continue;
    const bindings = g.bindings?.map((b) => ({
      uid: b.uid,
      capabilities: r.scope === undefined ? b.capabilities : intersect(b.capabilities, r.scope),
    }));
    const base = { ...g, capabilities: caps, ...(bindings ? { bindings } : {}) };
    if (r.resources === undefined) {
      out.push(base);
      continue;
    }
    const scopes = new Set<string>();
    for (const res of r.resources) {
      if (isSelfOrBelow(g.scope, res)) scopes.add(res);
      else if (isSelfOrBelow(res, g.scope)) scopes.add(g.scope);
    }
    for (const scope of scopes) out.push({ ...base, scope });
  }
  return out;
}

function intersect<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): ReadonlySet<T> {
  const out = new Set<T>();
  for (const x of a) if (b.has(x)) out.add(x);
  return out;
}
