import { z } from 'zod';
import type { RouteTarget } from '../openapi/contract.js';
import { mountOperation } from '../openapi/contract.js';

/** What a CLI needs to sign a person in, given only the API address (as chainctl's does). */
export const loginConfigurationSchema = z
  .object({
    audience: z.string().meta({
      description: "The `aud` the STS wants: Arbor's issuer (ARBOR_ISSUER_URL).",
    }),
    issuer: z
      .string()
      .optional()
      .meta({ description: 'The OIDC provider people sign in with (ARBOR_LOGIN_ISSUER).' }),
    clientId: z
      .string()
      .optional()
      .meta({ description: 'Its public client id (ARBOR_LOGIN_CLIENT_ID); no secret.' }),
  })
  .meta({ description: 'How to sign in here; issuer and clientId are absent when unset.' });

export interface LoginConfiguration {
  audience: string;
  provider?: { issuer: string; clientId: string } | undefined;
}

/**
 * `GET /.well-known/arbor-login`: public, like the discovery documents, and holds nothing
 * secret (the client is public: PKCE, no secret). `arbor auth login --api URL` reads it.
 */
export function mountLoginRoute(t: RouteTarget, c: LoginConfiguration): void {
  const body = { audience: c.audience, ...(c.provider ?? {}) };
  mountOperation(
    t,
    {
      method: 'get',
      path: '/.well-known/arbor-login',
      operationId: 'discovery.login',
      summary: 'The login provider of this server, for the CLI',
      tags: ['Discovery'],
      access: 'public',
      response: {
        status: 200,
        description: 'The login provider and the STS audience.',
        schema: { name: 'LoginConfiguration', schema: loginConfigurationSchema, io: 'output' },
        headers: ['Cache-Control'],
      },
      errors: [],
    },
    (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = body;
    },
  );
}
