/**
 * The capability catalogue, as the API publishes it: the enum of `capability` in its
 * OpenAPI document (the same list `arbor capabilities` prints). Read once, on first need,
 * so the console never carries a copy that could drift from the server's.
 */
let catalogue: Promise<string[]> | undefined;
/** The catalogue once loaded (the picker loads it before any did-you-mean is asked). */
let loaded: string[] = [];

interface OpenApiDoc {
  components?: {
    schemas?: Record<string, { properties?: Record<string, { enum?: unknown }> }>;
  };
}

export function capabilities(): Promise<string[]> {
  catalogue ??= fetch('/openapi.json', { credentials: 'omit' })
    .then((r) => {
      if (!r.ok) throw new Error(`The capability list did not load (${r.status}).`);
      return r.json() as Promise<OpenApiDoc>;
    })
    .then((doc) => {
      const list = doc.components?.schemas?.CheckAccessResult?.properties?.capability?.enum;
      if (!Array.isArray(list)) throw new Error('The server publishes no capability list.');
      loaded = list.filter((c): c is string => typeof c === 'string');
      return loaded;
    })
    .catch((e: unknown) => {
      catalogue = undefined; // try again next time
      throw e;
    });
  return catalogue;
}

/** Edit distance, for did-you-mean; the texts are short. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** The catalogue entry nearest a mistyped capability, when one is near enough. */
export function didYouMean(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of loaded) {
    const d = distance(t, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= Math.max(2, Math.floor(t.length / 3)) ? best : undefined;
}
