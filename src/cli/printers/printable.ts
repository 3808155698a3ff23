import type { Column, Item } from '../resource-kinds.js';

/** What a printer shows: one resource (get, create, update) or a list, and its columns. */
export interface Printable {
  items: readonly Item[];
  /** A Get or a write: one object in JSON/YAML rather than a list. */
  single: boolean;
  columns: readonly Column[];
  wide: readonly Column[];
}

/** Text for standard output, ending in a newline (empty for an empty list in `name`). */
export type Printer = (p: Printable) => string;
