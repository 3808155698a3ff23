import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { SECRET_KEY_IDS_HEADER, type AdminService } from '../../resources/admin/admin-service.js';
import { principalOf } from '../middleware/authn.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';

const statusSchema = z.object({
  kind: z.enum(['postgres', 'pglite']),
  applied: z.array(z.string()),
  pending: z.array(z.string()),
});
const resealSchema = z.object({
  resealed: z.number().int(),
  unreadable: z.array(z.string()).meta({ description: 'uids whose key is no longer configured' }),
});
const archiveSchema = z.string().meta({
  description: 'A gzipped tar of the embedded data directory (what `arbor restore` loads).',
  format: 'binary',
});

/**
 * What `arbor status`, `arbor backup` and `arbor secret-key reseal` do through a running
 * server (the one process that may open an embedded database). Administrator only.
 */
export function mountAdminRoutes(t: RouteTarget, admin: AdminService): void {
  const common = { tags: ['Admin'], access: 'bearer', errors: [401, 403] } as const;
  mountOperation(
    t,
    {
      ...common,
      method: 'get',
      path: '/admin/v1/status',
      operationId: 'admin.status',
      summary: 'The database and its migrations, applied and pending',
      response: {
        status: 200,
        description: 'The database.',
        schema: { name: 'DatabaseStatus', schema: statusSchema, io: 'output' },
      },
    },
    async (ctx) => {
      ctx.body = await admin.status(principalOf(ctx));
    },
  );
  mountOperation(
    t,
    {
      ...common,
      method: 'post',
      path: '/admin/v1/secrets:reseal',
      operationId: 'admin.secrets.reseal',
      summary: 'Seal every stored secret with the current secret key',
      response: {
        status: 200,
        description: 'How many were resealed, and which could not be opened.',
        schema: { name: 'ResealResult', schema: resealSchema, io: 'output' },
      },
    },
    async (ctx) => {
      ctx.body = await admin.resealSecrets(principalOf(ctx));
    },
  );
  mountOperation(
    t,
    {
      ...common,
      errors: [400, 401, 403],
      method: 'get',
      path: '/admin/v1/backup',
      operationId: 'admin.backup',
      summary: 'A consistent copy of the embedded database',
      description:
        'PGlite only (FAILED_PRECONDITION on PostgreSQL: use pg_dump). Signing and secret ' +
        'keys are not included: back up their directories beside it.',
      response: {
        status: 200,
        description: 'The archive.',
        schema: { name: 'BackupArchive', schema: archiveSchema, io: 'output' },
        mediaType: 'application/gzip',
      },
    },
    async (ctx) => {
      const { dump: blob, secretKeyIds } = await admin.backup(principalOf(ctx));
      // The ids (hashes) of the secret keys its sealed secrets need, never the keys.
      ctx.set(SECRET_KEY_IDS_HEADER, secretKeyIds.join(','));
      ctx.compress = false; // gzipped already
      ctx.type = 'application/gzip';
      ctx.length = blob.size;
      ctx.body = Readable.fromWeb(blob.stream() as WebReadableStream<Uint8Array>);
    },
  );
}
