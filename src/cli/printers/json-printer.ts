import type { Printer } from './printable.js';

/** `-o json`: the API's JSON; a list is an array of its resources. */
export const jsonPrinter: Printer = (p) =>
  `${JSON.stringify(p.single ? p.items[0] : p.items, null, 2)}\n`;
