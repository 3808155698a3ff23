/**
 * `toWire` for answers a read cache may share between requests. A service hands out a
 * frozen object only when every request that gets it shares it (db/read-cache.ts); its wire
 * form is then made once and frozen in turn, so that the fast path makes its JSON once too
 * (fast-reads.ts). Anything else is mapped afresh.
 */
export function sharedWire<A extends object, B extends object>(toWire: (a: A) => B): (a: A) => B {
  const made = new WeakMap<A, B>();
  return (a) => {
    if (!Object.isFrozen(a)) return toWire(a);
    let b = made.get(a);
    if (b === undefined) made.set(a, (b = Object.freeze(toWire(a))));
    return b;
  };
}
