import type { z } from 'zod';
import type { OperationContract } from '../openapi/contract.js';

/**
 * The contract of a public, cacheable discovery document (OpenID discovery, its JWKS, the
 * OAuth authorization server's and protected resource's metadata): a GET answering `schema`.
 */
export function discoveryOperation(
  path: string,
  operationId: string,
  summary: string,
  schema: z.ZodType,
  name: string,
): OperationContract {
  return {
    method: 'get',
    path,
    operationId,
    summary,
    tags: ['Discovery'],
    access: 'public',
    response: {
      status: 200,
      description: summary,
      schema: { name, schema, io: 'output' },
      headers: ['Cache-Control'],
    },
    errors: [],
  };
}
