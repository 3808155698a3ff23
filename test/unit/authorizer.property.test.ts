import test from 'ava';
import fc from 'fast-check';
import { Authorizer, type Grant } from '../../src/auth/authorizer.js';
import { CAPABILITIES, type Capability } from '../../src/auth/capabilities.js';
import type { Principal } from '../../src/auth/principal.js';
import type { Visibility } from '../../src/core/visibility.js';

/** A random tree of uid paths: each node is its parent's path plus a segment. */
const treeArb = fc.array(fc.nat(), { minLength: 1, maxLength: 25 }).map((parents) => {
  const roots = ['a'.repeat(40), 'b'.repeat(40)];
  const nodes = [...roots];
  parents.forEach((p, i) =>
    nodes.push(`${nodes[p % nodes.length]}/${i.toString(16).padStart(16, '0')}`),
  );
  return nodes;
});

const capArb = fc.constantFrom<Capability>(
  'groups.list',
  'groups.create',
  'identity.list',
  'repo.list',
);

/** The reference model: a grant at S covers S and every path below it, nothing else. */
function modelCan(grants: Grant[], cap: Capability, uid: string): boolean {
  return grants.some(
    (g) => g.capabilities.has(cap) && (uid === g.scope || uid.startsWith(`${g.scope}/`)),
  );
}

function visibleUnder(vis: Visibility, uid: string): boolean {
  if (vis.kind === 'all') return true;
  return vis.scopes.some((s) => uid === s || uid.startsWith(`${s}/`));
}

test('authorizer: agrees with the reference model on random trees and bindings', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      treeArb.chain((nodes) =>
        fc.tuple(
          fc.constant(nodes),
          fc.array(
            fc.record({
              at: fc.nat(),
              caps: fc.subarray([...CAPABILITIES], { minLength: 1, maxLength: 6 }),
            }),
            {
              maxLength: 6,
            },
          ),
          fc.nat(),
          capArb,
        ),
      ),
      async ([nodes, rawGrants, pick, cap]) => {
        const grants: Grant[] = rawGrants.map((g) => ({
          scope: nodes[g.at % nodes.length]!,
          capabilities: new Set(g.caps),
        }));
        const authz = new Authorizer({ grantsOf: () => Promise.resolve(grants) });
        const p: Principal = { kind: 'identity', uid: nodes[0]! };
        const uid = nodes[pick % nodes.length]!;
        if ((await authz.can(p, cap, uid)) !== modelCan(grants, cap, uid)) return false;
        // A sibling that merely shares a prefix of characters is never covered.
        if ((await authz.can(p, cap, `${uid}0`)) !== modelCan(grants, cap, `${uid}0`)) return false;
        const vis = await authz.visibility(p, cap);
        return nodes.every((n) => visibleUnder(vis, n) === modelCan(grants, cap, n));
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});

test('authorizer: superusers see everything; identities with no grants see nothing', async (t) => {
  const authz = new Authorizer({ grantsOf: () => Promise.resolve([]) });
  t.true(await authz.can({ kind: 'admin' }, 'groups.delete', 'a'.repeat(40)));
  t.deepEqual(await authz.visibility({ kind: 'system', name: 'reconciler' }, 'groups.list'), {
    kind: 'all',
  });
  t.false(await authz.can({ kind: 'identity', uid: 'x' }, 'groups.list', 'a'.repeat(40)));
  t.deepEqual(await authz.visibility({ kind: 'identity', uid: 'x' }, 'groups.list'), {
    kind: 'scopes',
    scopes: [],
  });
});

test('authorizer: grants are read once per principal object', async (t) => {
  let reads = 0;
  const authz = new Authorizer({
    grantsOf: () => {
      reads++;
      return Promise.resolve([]);
    },
  });
  const p: Principal = { kind: 'identity', uid: 'x' };
  await authz.can(p, 'groups.list', 'a');
  await authz.visibility(p, 'groups.list');
  t.is(reads, 1);
});
