import fc from 'fast-check';
import type { Capability } from '../../src/auth/capabilities.js';
import type { ModelWorld } from './access-model.js';
import type { ModelChange } from './simulate-model.js';

/**
 * The pieces of a random change set that the simulate property tests share (the model's and
 * the real-apply one): shapes are numbers into a world (`pick` wraps them round), so that
 * fast-check shrinks a failing set to small indices whatever the world.
 */

/** The `i`-th of `xs`, wrapped round. */
export const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length]!;

/** Every change but a create, which each test draws its own way (windows, binds again). */
export type RemovalShape =
  | { kind: 'unbind'; binding: number; missing: boolean }
  | { kind: 'editRole'; role: number; caps: Capability[] }
  | { kind: 'deleteIdentity'; identity: number }
  | { kind: 'deleteGroup'; group: number };

/** A change set's change: the test's own create (weight 4) or one of the others. */
export function changeArbOf<C extends { kind: 'create' }>(
  create: fc.Arbitrary<C>,
  pool: readonly Capability[],
  weights: { deleteIdentity: number } = { deleteIdentity: 1 },
): fc.Arbitrary<C | RemovalShape> {
  type Change = C | RemovalShape;
  const weighted = (weight: number, arbitrary: fc.Arbitrary<Change>) => ({ weight, arbitrary });
  return fc.oneof(
    weighted(4, create),
    weighted(
      3,
      fc.record({ kind: fc.constant('unbind' as const), binding: fc.nat(), missing: fc.boolean() }),
    ),
    weighted(
      2,
      fc.record({
        kind: fc.constant('editRole' as const),
        role: fc.nat(),
        caps: fc.subarray([...pool], { minLength: 1 }),
      }),
    ),
    weighted(
      weights.deleteIdentity,
      fc.record({ kind: fc.constant('deleteIdentity' as const), identity: fc.nat() }),
    ),
    weighted(1, fc.record({ kind: fc.constant('deleteGroup' as const), group: fc.nat() })),
  );
}

/** A change other than a create, in the world: a missing binding is a uid under a group. */
export function removalOf(w: ModelWorld, c: RemovalShape): ModelChange {
  switch (c.kind) {
    case 'unbind': {
      const missing = c.missing || w.bindings.length === 0;
      const uid = missing
        ? `${pick(w.groups, c.binding)}/00000000000000aa`
        : pick(w.bindings, c.binding).uid;
      return { deleteRoleBinding: { uid } };
    }
    case 'editRole':
      return { updateRole: { uid: pick([...w.roles.keys()], c.role), capabilities: c.caps } };
    case 'deleteIdentity':
      return { deleteIdentity: { uid: pick(w.identities, c.identity) } };
    case 'deleteGroup':
      return { deleteGroup: { uid: pick(w.groups, c.group) } };
  }
}
