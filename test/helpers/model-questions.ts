import fc from 'fast-check';

/**
 * The questions the access model's property test asks of a world: numbers into the world
 * (wrapped round by `pick`), so that fast-check draws them whatever the world is.
 */
export type Question =
  | { kind: 'can'; identity: number; cap: number; node: number; below: boolean }
  | { kind: 'check'; caller: number; identity: number; cap: number; node: number }
  | { kind: 'whoCan'; caller: number; cap: number; node: number; pageSize: number }
  | { kind: 'whatCan'; caller: number; identity: number }
  | { kind: 'bind'; caller: number; identity: number; role: number; node: number }
  | { kind: 'deleteGroup'; caller: number; node: number }
  | {
      kind: 'door';
      door: 'rest' | 'grpc';
      identity: number;
      node: number;
      target: 'group' | 'identity';
    }
  | {
      kind: 'context';
      identity: number;
      cap: number;
      node: number;
      below: boolean;
      type: number;
      name: number;
      claims: number;
    }
  | { kind: 'list'; identity: number };

const doorArb = fc.record({
  kind: fc.constant('door' as const),
  door: fc.constantFrom('rest' as const, 'grpc' as const),
  identity: fc.nat(),
  node: fc.nat(),
  target: fc.constantFrom('group' as const, 'identity' as const),
});
export const contextArb = fc.record({
  kind: fc.constant('context' as const),
  identity: fc.nat(),
  cap: fc.nat(),
  node: fc.nat(),
  below: fc.boolean(),
  type: fc.nat(),
  name: fc.nat(),
  claims: fc.nat(),
});

export const questionArb: fc.Arbitrary<Question> = fc.oneof(
  fc.record({
    kind: fc.constant('can' as const),
    identity: fc.nat(),
    cap: fc.nat(),
    node: fc.nat(),
    below: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('check' as const),
    caller: fc.nat(),
    identity: fc.nat(),
    cap: fc.nat(),
    node: fc.nat(),
  }),
  fc.record({
    kind: fc.constant('whoCan' as const),
    caller: fc.nat(),
    cap: fc.nat(),
    node: fc.nat(),
    pageSize: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({ kind: fc.constant('whatCan' as const), caller: fc.nat(), identity: fc.nat() }),
  fc.record({
    kind: fc.constant('bind' as const),
    caller: fc.nat(),
    identity: fc.nat(),
    role: fc.nat(),
    node: fc.nat(),
  }),
  fc.record({ kind: fc.constant('deleteGroup' as const), caller: fc.nat(), node: fc.nat() }),
  doorArb,
  contextArb,
  contextArb,
  fc.record({ kind: fc.constant('list' as const), identity: fc.nat() }),
);
