/**
 * `make`, remembered for answers a read cache shares between requests. A service hands out
 * a frozen object only when every request that gets it shares it (db/read-cache.ts); what a
 * door makes of it (its wire form, ETag, JSON) is then made once, and frozen in turn when
 * it is an object, so that the next door along may remember what it makes of that too.
 * Anything else is made afresh, every time.
 */
export function madeOnce<A, B>(make: (a: A) => B): (a: A) => B {
  const made = new WeakMap<object, B>();
  return (a) => {
    if (typeof a !== 'object' || a === null || !Object.isFrozen(a)) return make(a);
    if (made.has(a)) return made.get(a)!;
    const b = make(a);
    if (typeof b === 'object' && b !== null) Object.freeze(b);
    made.set(a, b);
    return b;
  };
}
