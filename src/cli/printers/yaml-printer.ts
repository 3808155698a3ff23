import { stringify } from 'yaml';
import type { Printer } from './printable.js';

/** `-o yaml`: the API's JSON as YAML; a list is a sequence of its resources. */
export const yamlPrinter: Printer = (p) => stringify(p.single ? p.items[0] : p.items);
