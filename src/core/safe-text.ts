/**
 * Text that no field of the API accepts, whatever its own rules: NUL (PostgreSQL cannot
 * store it in text or jsonb) and lone UTF-16 surrogates (not Unicode text at all; they
 * would be silently replaced on the way to the database, or refused there). Checked once,
 * at the edge of every input (bodies, query parameters, path parameters), so that no
 * such value reaches a store and comes back as a 500.
 */
// No `u` flag: the classes must match single UTF-16 code units, not code points.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `s` is refused, or undefined when it is acceptable text. */
export function unsafeTextReason(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode text (no lone surrogates)';
  return undefined;
}

/**
 * Every string in a parsed JSON value (object keys included) that `unsafeTextReason`
 * refuses, as `[path, reason]` pairs with dotted paths (`claimMatch.claims.x`).
 * Bounded by the body size the front door already enforces.
 */
export function unsafeTextIn(value: unknown, path = ''): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (v: unknown, at: string, depth: number): void => {
    if (typeof v === 'string') {
      const why = unsafeTextReason(v);
      if (why !== undefined) out.push([at || 'body', why]);
      return;
    }
    if (typeof v !== 'object' || v === null || depth > 200) return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${at}${at ? '.' : ''}${i}`, depth + 1));
      return;
    }
    for (const [k, item] of Object.entries(v)) {
      const why = unsafeTextReason(k);
      // A refused key is not repeated in the answer, nor walked into.
      if (why !== undefined) out.push([at || 'body', `keys ${why}`]);
      else walk(item, `${at}${at ? '.' : ''}${k}`, depth + 1);
    }
  };
  walk(value, path, 0);
  return out;
}
