import { z } from 'zod';
import { etagOfJson } from '../etag.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import type { OpenApiDocument } from '../openapi/document.js';

export const OPENAPI_PATH = '/openapi.json';

const documentSchema = z
  .looseObject({ openapi: z.literal('3.1.0') })
  .meta({ description: 'An OpenAPI 3.1 document.' });

/**
 * `GET /openapi.json`: this document, public like the discovery documents. `document` is
 * called on the first request, once every route has been recorded; the text and its ETag
 * are kept for the life of the process (If-None-Match is answered 304).
 */
export function mountOpenApiRoute(t: RouteTarget, document: () => OpenApiDocument): void {
  let served: { text: string; etag: string } | undefined;
  mountOperation(
    t,
    {
      method: 'get',
      path: OPENAPI_PATH,
      operationId: 'meta.openapi',
      summary: 'This OpenAPI document',
      description: 'Generated from the zod schemas that validate input and shape answers.',
      tags: ['Meta'],
      access: 'public',
      response: {
        status: 200,
        description: 'The document.',
        schema: { name: 'OpenApiDocument', schema: documentSchema, io: 'output' },
        headers: ['ETag', 'Cache-Control'],
      },
      errors: [],
    },
    (ctx) => {
      if (!served) {
        const text = JSON.stringify(document());
        served = { text, etag: etagOfJson(text) };
      }
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.set('ETag', served.etag);
      ctx.status = 200;
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'application/json';
      ctx.body = served.text;
    },
  );
}
