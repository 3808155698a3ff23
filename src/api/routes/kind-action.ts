import type { Context } from 'koa';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { principalOf } from '../middleware/authn.js';
import { readJsonObject } from '../middleware/json-body.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { CREATE_ERRORS } from '../openapi/error-responses.js';

type Body = Record<string, unknown>;

/** The kind a custom action belongs to: where it is mounted and how it is named. */
export interface ActionKind {
  /** The kind's v2 path: the action is `POST <path>:<verb>`. */
  path: string;
  /** The operation ids' prefix (`iam.accessRequests`). */
  operationPrefix: string;
  /** The body schemas' suffix (`AccessRequest`: `ApproveAccessRequestBody`). */
  bodyName: string;
  tag: string;
}

/** One action of a kind: a JSON body naming what it acts on, answered by `run`. */
export interface KindAction {
  verb: string;
  summary: string;
  description: string;
  input: z.ZodType;
  example: Body;
  output: { name: string; schema: z.ZodType; description: string };
  run: (p: Principal, body: Body) => Promise<unknown>;
}

/**
 * Mount `POST <path>:<verb>` (a custom method, AIP-136) with its OpenAPI operation: the
 * kinds with verbs beyond CRUD (access requests' approve, access reviews' decide) share it.
 */
export function mountKindAction(
  t: RouteTarget,
  bodyLimit: number,
  k: ActionKind,
  o: KindAction,
): void {
  mountOperation(
    t,
    {
      method: 'post',
      path: `${k.path}:${o.verb}`,
      operationId: `${k.operationPrefix}.${o.verb}`,
      summary: o.summary,
      description: o.description,
      tags: [k.tag],
      access: 'bearer',
      requestBody: {
        mediaType: 'application/json',
        schema: {
          name: `${o.verb[0]!.toUpperCase()}${o.verb.slice(1)}${k.bodyName}Body`,
          schema: o.input,
          io: 'input',
        },
        required: true,
        examples: { example: { summary: o.summary, value: o.example } },
      },
      response: {
        status: 200,
        description: o.output.description,
        schema: { ...o.output, io: 'output' },
      },
      errors: CREATE_ERRORS,
    },
    async (ctx: Context) => {
      ctx.body = await o.run(principalOf(ctx), await readJsonObject(ctx, bodyLimit));
    },
  );
}
