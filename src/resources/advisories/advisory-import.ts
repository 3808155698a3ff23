import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import {
  failedPrecondition,
  invalidArgument,
  permissionDenied,
  type FieldViolation,
} from '../../core/rpc-error.js';
import type { Tx, UnitOfWork } from '../tx.js';
import { osvTime, toNewAdvisory, type NewAdvisory } from './advisory.js';
import type { AdvisoryStore } from './advisory-store.js';
import { listOsvFiles, pathSource, readOsvFile, type OsvSource } from './osv-files.js';

export interface AdvisoryImporterDeps {
  uow: UnitOfWork;
  advisories: AdvisoryStore;
  authz: Authorizer;
}

export interface ImportProgress {
  phase: 'validate' | 'write';
  filesDone: number;
  files: number;
}

export interface ImportOptions {
  /** Called after every file of each phase; the caller decides how often to report. */
  onProgress?: (p: ImportProgress) => void;
}

export interface ImportResult {
  files: number;
  /** Valid records read, duplicates included. */
  records: number;
  created: number;
  updated: number;
  /** Already stored with the same `modified`: not written. */
  unchanged: number;
  /** Already stored with a newer `modified`: not overwritten. */
  stale: number;
  /** The same OSV id again in this run; the newest `modified` (else the first) is taken. */
  duplicates: number;
}

/** Violations listed in one error; the count of the rest is appended. */
const MAX_LISTED = 50;
/** Records written per store call. */
const BATCH = 500;

/**
 * Imports OSV advisories from files: validates everything first, then writes in one
 * transaction, so a run either imports every file or nothing.
 */
export class AdvisoryImporter {
  constructor(private readonly d: AdvisoryImporterDeps) {}

  /**
   * Import `source`: one `.json` file, or every `.json` file below a directory. A file
   * holds one OSV object or a JSON array of them. Idempotent: records are upserted by
   * OSV id, and one whose `modified` is unchanged (or older than the stored one) is not
   * written.
   * @throws RpcError PERMISSION_DENIED unless the caller is a superuser; INVALID_ARGUMENT
   *   when `source` cannot be read or any record is malformed (one field violation per
   *   problem, each naming its file; nothing is written); FAILED_PRECONDITION when a file
   *   changed between validation and writing (rolled back).
   */
  async import(p: Principal, source: string, opts: ImportOptions = {}): Promise<ImportResult> {
    return this.importFiles(p, async () => (await listOsvFiles(source)).map(pathSource), opts);
  }

  /**
   * Import the files `collect` gives (an upload, spooled by the caller), with the same
   * validation, progress and result as {@link import}. `collect` runs only once the caller
   * is known to be allowed, so nobody else makes the server read or store anything.
   * @throws RpcError as {@link import}, and whatever `collect` throws.
   */
  async importFiles(
    p: Principal,
    collect: () => Promise<OsvSource[]>,
    opts: ImportOptions = {},
  ): Promise<ImportResult> {
    if (!this.d.authz.isSuperuser(p)) {
      throw permissionDenied('only an administrator can import advisories');
    }
    const files = await collect();
    const report = (phase: ImportProgress['phase'], filesDone: number) =>
      opts.onProgress?.({ phase, filesDone, files: files.length });

    // Pass 1: validate every file and pick, per OSV id, the one record to keep.
    const violations: FieldViolation[] = [];
    const chosen = new Map<string, { at: string; modified: number }>();
    const counts: number[] = [];
    let records = 0;
    for (const [f, file] of files.entries()) {
      const { entries, violations: v } = await readOsvFile(file);
      violations.push(...v);
      counts.push(entries.length);
      entries.forEach(({ record }, i) => {
        records++;
        const modified = osvTime(record.modified).getTime();
        const prev = chosen.get(record.id);
        if (!prev || modified > prev.modified) chosen.set(record.id, { at: `${f}:${i}`, modified });
      });
      report('validate', f + 1);
    }
    if (violations.length > 0) throw malformed(violations);

    // Pass 2: read again (memory stays bounded by one file) and write in one transaction.
    const result: ImportResult = {
      files: files.length,
      records,
      created: 0,
      updated: 0,
      unchanged: 0,
      stale: 0,
      duplicates: records - chosen.size,
    };
    await this.d.uow.run(async (tx) => {
      // A transaction aborted by a conflict runs again from here: count only the last run.
      Object.assign(result, { created: 0, updated: 0, unchanged: 0, stale: 0 });
      let batch: NewAdvisory[] = [];
      for (const [f, file] of files.entries()) {
        const { entries, violations: v } = await readOsvFile(file);
        if (v.length > 0 || entries.length !== counts[f]) throw changed(file.name);
        for (const [i, { record, original }] of entries.entries()) {
          if (chosen.get(record.id)?.at !== `${f}:${i}`) continue;
          batch.push(toNewAdvisory(record, original));
          if (batch.length >= BATCH) {
            await this.write(tx, batch, result);
            batch = [];
          }
        }
        report('write', f + 1);
      }
      await this.write(tx, batch, result);
    });
    return result;
  }

  /** Classify one batch against what is stored and write the new and newer records. */
  private async write(tx: Tx, batch: NewAdvisory[], result: ImportResult): Promise<void> {
    if (batch.length === 0) return;
    const stored = await this.d.advisories.modifiedOf(
      tx,
      batch.map((a) => a.uid),
    );
    const toWrite: NewAdvisory[] = [];
    for (const a of batch) {
      const have = stored.get(a.uid)?.getTime();
      if (have === undefined || have < a.updateTime.getTime()) toWrite.push(a);
      else if (have === a.updateTime.getTime()) result.unchanged++;
      else result.stale++;
    }
    const written = await this.d.advisories.upsert(tx, toWrite);
    for (const a of toWrite) {
      if (!written.has(a.uid)) result.unchanged++;
      else if (stored.has(a.uid)) result.updated++;
      else result.created++;
    }
  }
}

function malformed(violations: FieldViolation[]) {
  const listed = violations.slice(0, MAX_LISTED);
  if (violations.length > MAX_LISTED) {
    listed.push({
      field: '(more)',
      description: `${violations.length - MAX_LISTED} more problems`,
    });
  }
  return invalidArgument(listed);
}

function changed(file: string) {
  return failedPrecondition(
    'SOURCE_CHANGED',
    `${file} changed during the import; nothing was imported`,
    file,
  );
}
