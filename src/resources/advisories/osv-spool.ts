import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OsvSource } from './osv-files.js';

/**
 * Uploaded OSV files kept in a private temporary directory as they arrive, so memory holds
 * one file at a time and the importer's two passes read them back like files on disk.
 */
export class OsvSpool {
  private constructor(private readonly dir: string) {}
  readonly sources: OsvSource[] = [];

  static async create(): Promise<OsvSpool> {
    return new OsvSpool(await mkdtemp(join(tmpdir(), 'arbor-import-')));
  }

  /** Keep one file; `name` is the uploader's and only ever shown back to it. */
  async add(name: string, content: string | Uint8Array): Promise<void> {
    const path = join(this.dir, `${this.sources.length}.json`);
    await writeFile(path, content);
    this.sources.push({
      name: name.replace(/\p{Cc}/gu, '').slice(0, 1024),
      read: () => readFile(path, 'utf8'),
    });
  }

  /** Remove the files (after the import, whatever its outcome). */
  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
