/**
 * Edit distance with transpositions (optimal string alignment): an insertion, a deletion, a
 * substitution or two neighbours swapped (`acem` for `acme`) cost one each.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The names among `names` that `word` was probably meant to be, nearest first: within an
 * edit distance of a third of its length (at least 1), or starting with it. At most `max`.
 */
export function closestNames(word: string, names: Iterable<string>, max = 3): string[] {
  const bound = Math.max(1, Math.floor(word.length / 3));
  const scored: [number, string][] = [];
  for (const n of new Set(names)) {
    if (n === word) continue;
    const d = editDistance(word, n);
    if (d <= bound) scored.push([d, n]);
    else if (word.length >= 2 && n.startsWith(word)) scored.push([bound + 1, n]);
  }
  scored.sort((x, y) => x[0] - y[0] || x[1].localeCompare(y[1]));
  return scored.slice(0, max).map(([, n]) => n);
}
