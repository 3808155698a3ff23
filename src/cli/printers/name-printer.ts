import type { Printer } from './printable.js';

/** `-o name`: one uid a line, for `xargs` and `$(…)`. */
export const namePrinter: Printer = (p) =>
  p.items
    .map((i) => `${typeof i.uid === 'string' ? i.uid : typeof i.id === 'string' ? i.id : ''}\n`)
    .join('');
