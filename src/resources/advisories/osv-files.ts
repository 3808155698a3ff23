import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FieldViolation } from '../../core/rpc-error.js';
import { invalidField } from '../../core/rpc-error.js';
import { osvRecordSchema, type OsvRecord } from './osv.js';

/** One file to import: its name (in messages) and how to read it. */
export interface OsvSource {
  name: string;
  read(): Promise<string>;
}

/** A file on this machine, named by its path. */
export function pathSource(path: string): OsvSource {
  return { name: path, read: () => readFile(path, 'utf8') };
}

/** One record of a file: validated, plus the original JSON that is stored. */
export interface OsvEntry {
  record: OsvRecord;
  original: unknown;
}

export interface OsvFile {
  entries: OsvEntry[];
  /** What is wrong with the file; each names the file as its field. */
  violations: FieldViolation[];
}

/**
 * The OSV files of `source`: the file itself, or every `*.json` below a directory, in
 * a stable (sorted) order.
 * @throws RpcError INVALID_ARGUMENT naming `path` when it cannot be read.
 */
export async function listOsvFiles(source: string): Promise<string[]> {
  let isDir: boolean;
  try {
    isDir = (await stat(source)).isDirectory();
  } catch (e) {
    throw invalidField('path', `${source}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  if (!isDir) return [source];
  const names = await readdir(source, { recursive: true, withFileTypes: true });
  return names
    .filter((d) => d.isFile() && d.name.endsWith('.json'))
    .map((d) => join(d.parentPath, d.name))
    .sort();
}

/** `affected[0].package.name` from a zod issue path. */
function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || '(record)';
}

/** Read and validate one file: a single OSV object, or a JSON array of them. */
export async function readOsvFile(source: OsvSource): Promise<OsvFile> {
  const file = source.name;
  const violations: FieldViolation[] = [];
  const fail = (description: string): OsvFile => ({
    entries: [],
    violations: [{ field: file, description }],
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(await source.read());
  } catch (e) {
    return fail(e instanceof SyntaxError ? `not valid JSON: ${e.message}` : 'cannot be read');
  }
  const isArray = Array.isArray(parsed);
  const items: unknown[] = isArray ? (parsed as unknown[]) : [parsed];
  const entries: OsvEntry[] = [];
  items.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      violations.push({
        field: file,
        description: `${isArray ? `[${i}]: ` : ''}must be an OSV object or an array of them`,
      });
      return;
    }
    const result = osvRecordSchema.safeParse(item);
    if (result.success) {
      entries.push({ record: result.data, original: item });
      return;
    }
    const id = (item as { id?: unknown }).id;
    const where = `${isArray ? `[${i}] ` : ''}${typeof id === 'string' ? `${id.slice(0, 64)} ` : ''}`;
    for (const issue of result.error.issues) {
      const why =
        issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
      violations.push({ field: file, description: `${where}${jsonPath(issue.path)}: ${why}` });
    }
  });
  return { entries, violations };
}
