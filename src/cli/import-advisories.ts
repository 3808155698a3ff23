import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { systemPrincipal } from '../auth/principal.js';
import type { components } from '../client/index.js';
import { compose } from '../compose.js';
import { Code } from '../core/rpc-code.js';
import { isRpcError, type RpcStatus } from '../core/rpc-error.js';
import type { ImportProgress, ImportResult } from '../resources/advisories/advisory-import.js';
import { listOsvFiles } from '../resources/advisories/osv-files.js';
import { adminTarget, statusMessage, type AdminTarget } from './admin-target.js';

export const IMPORT_ADVISORIES_USAGE = `usage: arbor import-advisories <file-or-directory> [--api <url>]

Imports vulnerability advisories in the OSV format (https://ossf.github.io/osv-schema/):
one .json file, or every .json file below a directory; each file holds one OSV object or
a JSON array of them. Every file is validated first and the run is one transaction:
either everything is imported or nothing is. Re-importing is safe: records whose
"modified" did not change are not written.

With --api (or ARBOR_API_URL), or when a server runs on the embedded data directory, the
files are sent to the server, which imports them the same way (administrator token:
ARBOR_TOKEN, ARBOR_ADMIN_TOKEN or arbor auth login).
`;

type ImportEvent = components['schemas']['ImportAdvisoriesEvent'];

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

function printSummary(r: ImportResult): number {
  process.stdout.write(
    `imported ${r.records} records from ${r.files} files: ${r.created} created, ` +
      `${r.updated} updated, ${r.unchanged} unchanged, ${r.stale} stale, ` +
      `${r.duplicates} duplicates\n`,
  );
  return 0;
}

/** A refused import, the same from the importer here or from a server's answer. */
function printFailure(e: Pick<RpcStatus, 'code' | 'message' | 'details'>): number {
  const lines: string[] = [];
  for (const d of e.details) {
    if (d['@type'].endsWith('BadRequest') && 'fieldViolations' in d) {
      for (const v of d.fieldViolations) lines.push(`  ${v.field}: ${v.description}`);
    }
  }
  const head = e.code === Code.INVALID_ARGUMENT ? 'nothing imported' : e.message;
  process.stderr.write(`arbor: import-advisories: ${head}\n${lines.map((l) => `${l}\n`).join('')}`);
  return 1;
}

/**
 * `arbor import-advisories <path> [--api <url>]`: parses the arguments, runs the importer
 * (here, or through a server) and prints its counts. Progress goes to stderr, the summary
 * to stdout.
 * @returns the process exit code: 0 on success, 1 when nothing was imported, 2 on usage.
 */
export async function importAdvisoriesCommand(
  args: readonly string[],
  opts: { api?: string } = {},
): Promise<number> {
  const [source, ...rest] = args;
  if (source === '--help' || source === '-h') {
    process.stdout.write(IMPORT_ADVISORIES_USAGE);
    return 0;
  }
  if (source === undefined || source.startsWith('-') || rest.length > 0) {
    process.stderr.write(IMPORT_ADVISORIES_USAGE);
    return 2;
  }
  const target = await adminTarget(opts.api);
  if (target.kind === 'api') return importThroughApi(target, source);
  const { config } = target;
  const logger = pino({ level: config.logLevel, base: { service: 'arbor' } }, pino.destination(2));
  const arbor = await compose(config, { logger, role: 'import-advisories' });
  try {
    return printSummary(
      await arbor.services.vulnerabilities.advisoryImport.import(
        systemPrincipal('import-advisories'),
        source,
        {
          onProgress: progressPrinter(process.stderr),
        },
      ),
    );
  } catch (e) {
    if (!isRpcError(e) || (e.code !== Code.INVALID_ARGUMENT && e.code !== Code.FAILED_PRECONDITION))
      throw e;
    return printFailure(e);
  } finally {
    await arbor.close();
  }
}

/** The upload: one JSON line per file, read one at a time as the request is sent. */
function upload(files: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const file = files[i++];
      if (file === undefined) return controller.close();
      const line = JSON.stringify({ name: file, content: await readFile(file, 'utf8') });
      controller.enqueue(encoder.encode(`${line}\n`));
    },
  });
}

async function* jsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<ImportEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim()) yield JSON.parse(line) as ImportEvent;
    }
  }
}

async function importThroughApi(
  target: Extract<AdminTarget, { kind: 'api' }>,
  source: string,
): Promise<number> {
  let files: string[];
  try {
    files = await listOsvFiles(source);
  } catch (e) {
    if (isRpcError(e)) return printFailure(e);
    throw e;
  }
  const { data, error, response } = await target.client.POST(
    '/vulnerabilities/v2beta1/advisories:import',
    {
      // The typed body is one line; the request sends every file, streamed.
      body: { name: '', content: '' },
      bodySerializer: () => upload(files) as unknown as string,
      headers: { 'content-type': 'application/x-ndjson' },
      parseAs: 'stream',
      duplex: 'half',
    } as never,
  );
  if (!data) {
    process.stderr.write(`arbor: import-advisories: ${statusMessage(error as never, response)}\n`);
    return 1;
  }
  const progress = progressPrinter(process.stderr);
  for await (const event of jsonLines(data as ReadableStream<Uint8Array>)) {
    if (event.progress) progress(event.progress);
    if (event.summary) return printSummary(event.summary);
    if (event.error) return printFailure(event.error as RpcStatus);
  }
  process.stderr.write('arbor: import-advisories: the server ended the answer early\n');
  return 1;
}
