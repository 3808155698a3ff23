import { z } from 'zod';
import { Code, type CodeNumber } from '../../core/rpc-code.js';
import { ERROR_DOMAIN, type RpcStatus } from '../../core/rpc-error.js';

const T = 'type.googleapis.com/google.rpc.';

export const errorInfoSchema = z
  .object({
    '@type': z.literal(`${T}ErrorInfo`),
    reason: z.string().meta({ description: 'The code name, e.g. `INVALID_ARGUMENT`.' }),
    domain: z.string().meta({ examples: [ERROR_DOMAIN] }),
    metadata: z.record(z.string(), z.string()).optional(),
  })
  .meta({ description: 'Always the first detail.' });

export const badRequestSchema = z
  .object({
    '@type': z.literal(`${T}BadRequest`),
    fieldViolations: z.array(z.object({ field: z.string(), description: z.string() })),
  })
  .meta({ description: 'Every field (or query parameter) that failed validation, and why.' });

export const preconditionFailureSchema = z
  .object({
    '@type': z.literal(`${T}PreconditionFailure`),
    violations: z.array(
      z.object({
        type: z.string().meta({ examples: ['RESOURCE_NOT_EMPTY', 'ETAG'] }),
        subject: z.string().optional(),
        description: z.string(),
      }),
    ),
  })
  .meta({ description: 'Why a precondition failed (a group with children, an If-Match).' });

export const resourceInfoSchema = z
  .object({
    '@type': z.literal(`${T}ResourceInfo`),
    resourceType: z.string().meta({ examples: ['iam.arbor.dev/Group'] }),
    resourceName: z.string(),
    description: z.string().optional(),
  })
  .meta({ description: 'The resource that was not found or already exists.' });

export const retryInfoSchema = z
  .object({
    '@type': z.literal(`${T}RetryInfo`),
    retryDelay: z.string().meta({
      description: 'How long to wait before trying again (a google.protobuf.Duration).',
      examples: ['12s'],
    }),
  })
  .meta({ description: 'When a spent budget allows the call again (also `Retry-After`).' });

export const quotaFailureSchema = z
  .object({
    '@type': z.literal(`${T}QuotaFailure`),
    violations: z.array(
      z.object({
        subject: z.string().meta({ examples: ['identity:<uid>', 'organization:<uid>'] }),
        description: z.string(),
      }),
    ),
  })
  .meta({ description: 'The cost budget a call ran past (docs/operations.md, Budgets).' });

/** The google.rpc.Status body of every error answer (docs/api.md, Errors). */
export const statusSchema = z
  .object({
    code: z
      .literal(Object.values(Code) as CodeNumber[])
      .meta({ description: 'The google.rpc code (3 invalid argument, 5 not found, …).' }),
    message: z.string().meta({ examples: ['Invalid argument: name: name is required'] }),
    details: z.array(
      z.discriminatedUnion('@type', [
        errorInfoSchema,
        badRequestSchema,
        preconditionFailureSchema,
        resourceInfoSchema,
        retryInfoSchema,
        quotaFailureSchema,
      ]),
    ),
  })
  .meta({ description: 'A google.rpc.Status: the body of every error answer.' });
export type Status = z.infer<typeof statusSchema>;

type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The error path renders RpcStatus, the document shows Status: they cannot drift apart. */
const _statusIsRpcStatus: Mutual<Status, RpcStatus> = true;
