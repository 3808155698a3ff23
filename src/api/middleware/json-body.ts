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

/**
 * Events, not `for await`: the stream's async iterator costs promises per chunk, which was
 * a tenth of a small POST's CPU (a check on the fast path). As the iterator does, a body
 * past the limit destroys the request (the rest is never read; the answer still goes out)
 * and a stream that errors or closes before its end rejects.
 */
function readTextOf(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] || '0');
  if (declared > limit) return Promise.reject(tooLarge(limit));
  if (req.readableEnded) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (e: unknown, text?: string) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (e === undefined) resolve(text!);
      else reject(e as Error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settle(tooLarge(limit));
        // As the iterator's own cleanup does for a server request: let go of the socket
        // first, so the 413 still goes out on it (and the connection then closes, the body
        // unread), then destroy the request so nothing more of it is read.
        (req as { socket: IncomingMessage['socket'] | null }).socket = null;
        req.destroy();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle(undefined, Buffer.concat(chunks).toString('utf8'));
    const onError = (e: unknown) => settle(e);
    const onClose = () =>
      settle(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
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
