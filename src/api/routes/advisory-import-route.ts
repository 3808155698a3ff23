import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import { z } from 'zod';
import { invalidField } from '../../core/rpc-error.js';
import type { AdvisoryImporter } from '../../resources/advisories/advisory-import.js';
import type { OsvSource } from '../../resources/advisories/osv-files.js';
import { OsvSpool } from '../../resources/advisories/osv-spool.js';
import { principalOf } from '../middleware/authn.js';
import { errorAnswerOf, type State } from '../middleware/request-context.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { statusSchema } from '../openapi/status-schema.js';

/** One line of an import upload: a file's name (shown in messages) and its text. */
export const importFileSchema = z
  .object({
    name: z.string().min(1).max(1024).meta({ description: 'the file name, as messages show it' }),
    content: z.string().meta({ description: 'the file: one OSV object or a JSON array of them' }),
  })
  .meta({ description: 'One OSV file of an upload (one JSON line of application/x-ndjson).' });

const progressSchema = z.object({
  phase: z.enum(['validate', 'write']),
  filesDone: z.number().int(),
  files: z.number().int(),
});

const summarySchema = z.object({
  files: z.number().int(),
  records: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  stale: z.number().int(),
  duplicates: z.number().int(),
});

/** One line of the answer: progress lines, then a summary or an error (nothing imported). */
export const importEventSchema = z
  .object({
    progress: progressSchema.optional(),
    summary: summarySchema.optional(),
    error: statusSchema.optional(),
  })
  .meta({
    description:
      'One JSON line of the answer: `progress` while validating and writing, then exactly ' +
      'one of `summary` (committed) or `error` (a google.rpc.Status; nothing was imported).',
  });
export type ImportEvent = z.infer<typeof importEventSchema>;

/** An upload larger than this is refused (the whole of OSV's GHSA set is about 1 GiB). */
export const MAX_IMPORT_BYTES = 2 * 1024 ** 3;

/** Each JSON line of `body`, split as it arrives, refusing more than `limit` bytes in all. */
async function* lines(body: AsyncIterable<Buffer>, limit: number): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) throw invalidField('body', `must be at most ${limit} bytes`);
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, nl));
      yield Buffer.concat(pending).toString('utf8');
      pending = [];
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) yield Buffer.concat(pending).toString('utf8');
}

/**
 * Spool each uploaded file as it arrives (see OsvSpool).
 * @throws RpcError INVALID_ARGUMENT for a line that is not an import file.
 */
async function spool(ctx: Context, files: OsvSpool): Promise<OsvSource[]> {
  let n = 0;
  for await (const line of lines(ctx.req as AsyncIterable<Buffer>, MAX_IMPORT_BYTES)) {
    n++;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw invalidField(`body[${n}]`, 'is not valid JSON');
    }
    const file = importFileSchema.safeParse(parsed);
    if (!file.success) throw invalidField(`body[${n}]`, 'must be {"name": …, "content": …}');
    await files.add(file.data.name, file.data.content);
  }
  return files.sources;
}

/**
 * `POST /vulnerabilities/v2beta1/advisories:import`: what `arbor import-advisories` does,
 * through the server that owns the database. The upload is streamed in (JSON lines, one file
 * each) and the answer streamed out (progress lines, then the summary or the error).
 */
export function mountAdvisoryImportRoute(t: RouteTarget, importer: AdvisoryImporter): void {
  mountOperation(
    t,
    {
      method: 'post',
      path: '/vulnerabilities/v2beta1/advisories:import',
      operationId: 'vulnerabilities.advisories.import',
      summary: 'Import OSV advisory files (administrator only)',
      description:
        'The body is `application/x-ndjson`: one line per OSV file, `{"name", "content"}`. ' +
        'Every file is validated first and the import is one transaction. The answer streams ' +
        'JSON lines: progress, then a summary, or an error once the upload has begun ' +
        '(then nothing was imported). A caller who is not the administrator gets 403 at once.',
      tags: ['Advisories'],
      access: 'bearer',
      requestBody: {
        mediaType: 'application/x-ndjson',
        schema: { name: 'ImportAdvisoryFile', schema: importFileSchema, io: 'input' },
        required: true,
        examples: {},
      },
      response: {
        status: 200,
        description: 'Progress lines, then one summary or one error line.',
        schema: { name: 'ImportAdvisoriesEvent', schema: importEventSchema, io: 'output' },
        mediaType: 'application/x-ndjson',
      },
      errors: [400, 401, 403],
    },
    async (ctx) => {
      const p = principalOf(ctx);
      const out = new PassThrough();
      const send = (e: ImportEvent) => out.write(`${JSON.stringify(e)}\n`);
      let files: OsvSpool | undefined;
      let accepted!: () => void;
      const allowed = new Promise<'allowed'>((r) => (accepted = () => r('allowed')));
      const done = importer.importFiles(
        p,
        async () => {
          accepted();
          files = await OsvSpool.create();
          return spool(ctx, files);
        },
        { onProgress: (progress) => send({ progress }) },
      );
      // Refused before the upload is read (not the administrator): an ordinary error answer.
      await Promise.race([allowed, done]);
      ctx.compress = false; // each line as it comes, not when a gzip block fills
      ctx.type = 'application/x-ndjson';
      ctx.body = out;
      const state = ctx.state as State;
      done
        .then(
          (summary) => send({ summary }),
          (e: unknown) => send({ error: errorAnswerOf(e, () => state.log).body }),
        )
        .finally(() => {
          out.end();
          void files?.dispose();
        })
        .catch(() => undefined);
    },
  );
}
