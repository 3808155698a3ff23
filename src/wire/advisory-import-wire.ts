import { z } from 'zod';
import { statusSchema } from '../api/openapi/status-schema.js';

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
