import type { Printer } from './printable.js';
import type { OutputFormat } from './output-formats.js';
import { jsonPrinter } from './json-printer.js';
import { namePrinter } from './name-printer.js';
import { tablePrinter, widePrinter } from './table-printer.js';
import { yamlPrinter } from './yaml-printer.js';

export type { Printer } from './printable.js';

export type { OutputFormat } from './output-formats.js';

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
