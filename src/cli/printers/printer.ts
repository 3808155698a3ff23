import type { Column, Item } from '../resource-kinds.js';
import { jsonPrinter } from './json-printer.js';
import { namePrinter } from './name-printer.js';
import { tablePrinter, widePrinter } from './table-printer.js';
import { yamlPrinter } from './yaml-printer.js';

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

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

const PRINTERS: Record<OutputFormat, Printer> = {
  table: tablePrinter,
  wide: widePrinter,
  json: jsonPrinter,
  yaml: yamlPrinter,
  name: namePrinter,
};

/** The printer of `-o <format>`. */
export function printerFor(format: OutputFormat): Printer {
  return PRINTERS[format];
}
