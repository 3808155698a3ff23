import { pino } from 'pino';
import { systemPrincipal } from '../auth/principal.js';
import { compose } from '../compose.js';
import { loadConfig } from '../config.js';
import { Code } from '../core/rpc-code.js';
import { isRpcError } from '../core/rpc-error.js';
import type { ImportProgress } from '../resources/advisories/advisory-import.js';

export const IMPORT_ADVISORIES_USAGE = `usage: arbor import-advisories <file-or-directory>

Imports vulnerability advisories in the OSV format (https://ossf.github.io/osv-schema/):
one .json file, or every .json file below a directory; each file holds one OSV object or
a JSON array of them. Every file is validated first and the run is one transaction:
either everything is imported or nothing is. Re-importing is safe: records whose
"modified" did not change are not written.
`;

/** Report every 1000 files or every 2 s, whichever comes first, and at the end of a phase. */
function progressPrinter(out: NodeJS.WritableStream) {
  let last = Date.now();
  return (p: ImportProgress) => {
    const now = Date.now();
    if (p.filesDone !== p.files && p.filesDone % 1000 !== 0 && now - last < 2000) return;
    last = now;
    out.write(`import-advisories: ${p.phase}: ${p.filesDone}/${p.files} files\n`);
  };
}

/**
 * `arbor import-advisories <path>`: parses the arguments, runs the importer service and
 * prints its counts. Progress goes to stderr, the summary to stdout.
 * @returns the process exit code: 0 on success, 1 when nothing was imported, 2 on usage.
 */
export async function importAdvisoriesCommand(args: readonly string[]): Promise<number> {
  const [source, ...rest] = args;
  if (source === '--help' || source === '-h') {
    process.stdout.write(IMPORT_ADVISORIES_USAGE);
    return 0;
  }
  if (source === undefined || source.startsWith('-') || rest.length > 0) {
    process.stderr.write(IMPORT_ADVISORIES_USAGE);
    return 2;
  }
  const config = loadConfig();
  const logger = pino({ level: config.logLevel, base: { service: 'arbor' } }, pino.destination(2));
  const arbor = await compose(config, { logger });
  try {
    const r = await arbor.services.advisoryImport.import(
      systemPrincipal('import-advisories'),
      source,
      { onProgress: progressPrinter(process.stderr) },
    );
    process.stdout.write(
      `imported ${r.records} records from ${r.files} files: ${r.created} created, ` +
        `${r.updated} updated, ${r.unchanged} unchanged, ${r.stale} stale, ` +
        `${r.duplicates} duplicates\n`,
    );
    return 0;
  } catch (e) {
    if (!isRpcError(e) || (e.code !== Code.INVALID_ARGUMENT && e.code !== Code.FAILED_PRECONDITION))
      throw e;
    const lines: string[] = [];
    for (const d of e.details) {
      if (d['@type'].endsWith('BadRequest') && 'fieldViolations' in d) {
        for (const v of d.fieldViolations) lines.push(`  ${v.field}: ${v.description}`);
      }
    }
    const head = e.code === Code.INVALID_ARGUMENT ? 'nothing imported' : e.message;
    process.stderr.write(`arbor: import-advisories: ${head}\n${lines.join('\n')}\n`);
    return 1;
  } finally {
    await arbor.close();
  }
}
