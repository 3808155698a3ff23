import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { Code } from '../../core/rpc-code.js';
import { RpcError, invalidField } from '../../core/rpc-error.js';

/**
 * Read a JSON object body, bounded in size. An empty body is `{}` (so an empty create
 * reports the missing fields, spec §7 rule 1).
 *
 * @throws RpcError INVALID_ARGUMENT for a wrong content type, bad JSON or a non-object;
 *   INVALID_ARGUMENT with HTTP 413 past `limit` bytes.
 */
export function readJsonObject(ctx: Context, limit: number): Promise<Record<string, unknown>> {
  return readJsonObjectOf(ctx.req, limit);
}

/**
 * `readJsonObject` on the raw request: the one reader of both REST paths (Koa's routes and
 * the fast path's POST), so that they refuse the same bodies with the same errors. Headers
 * are read as Koa's `ctx.get` reads them ('' when absent).
 */
export async function readJsonObjectOf(
  req: IncomingMessage,
  limit: number,
): Promise<Record<string, unknown>> {
  const text = await readTextOf(req, limit);
  if (text.trim() === '') return {};
  const type = req.headers['content-type'] || '';
  if (type && !/^application\/(json|[a-z.+-]*\+json)\b/i.test(type)) {
    throw invalidField('body', 'must be JSON (Content-Type: application/json)');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidField('body', 'is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidField('body', 'must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** Read the whole body as UTF-8, refusing more than `limit` bytes before buffering it all. */
export function readText(ctx: Context, limit: number): Promise<string> {
  return readTextOf(ctx.req, limit);
}

async function readTextOf(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] || '0');
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function tooLarge(limit: number): RpcError {
  return new RpcError(
    Code.INVALID_ARGUMENT,
    `Invalid argument: body: must be at most ${limit} bytes`,
    [
      {
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [{ field: 'body', description: `must be at most ${limit} bytes` }],
      },
    ],
    413,
  );
}
