import type { Access, Contract, OperationContract, ParameterContract } from './contract.js';
import { BUDGETED_OPERATIONS, ERROR_RESPONSES } from './error-responses.js';
import { SchemaComponents } from './schema-components.js';
import {
  badRequestSchema,
  errorInfoSchema,
  preconditionFailureSchema,
  resourceInfoSchema,
  statusSchema,
} from './status-schema.js';

/** An OpenAPI 3.1 document, as JSON. */
export type OpenApiDocument = Record<string, unknown> & { openapi: '3.1.0' };

export interface DocumentOptions {
  /** The server's address (ARBOR_ISSUER_URL). */
  serverUrl: string;
}

const SECURITY: Readonly<Record<Access, readonly Record<string, string[]>[]>> = {
  bearer: [{ bearer: [] }],
  public: [],
  // Anonymous too: the registry asks without credentials first.
  registryBasic: [{}, { registryBasic: [] }],
  registryNotify: [{ registryNotify: [] }],
};

const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An Arbor API token from the STS (one hour), or the bootstrap ARBOR_ADMIN_TOKEN.',
  },
  registryBasic: {
    type: 'http',
    scheme: 'basic',
    description: 'What a registry client logs in with (docs/registry.md).',
  },
  registryNotify: {
    type: 'http',
    scheme: 'bearer',
    description: "The registry's notification secret (ARBOR_REGISTRY_NOTIFY_TOKEN).",
  },
};

const HEADERS = {
  ETag: {
    description: 'The version of the resource; send it back in If-Match.',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: 'How long the answer may be kept.', schema: { type: 'string' } },
  'Arbor-Consistency-Token': {
    description:
      'With read replicas (DATABASE_READ_URL) only: where the write committed. Send it back in ' +
      'the same header on reads that must see this write (docs/operations.md, "Read replicas").',
    schema: { type: 'string' },
  },
};

function parameter(p: ParameterContract) {
  return {
    name: p.name,
    in: p.in,
    description: p.description,
    required: p.required ?? p.in === 'path',
    schema: p.schema,
    ...(p.explode ? { style: 'form', explode: true } : {}),
    ...(p.example === undefined ? {} : { example: p.example }),
  };
}

function operation(op: OperationContract, schemas: SchemaComponents) {
  const { response: r, requestBody: b } = op;
  const statuses = BUDGETED_OPERATIONS.has(op.operationId) ? [...op.errors, 429] : op.errors;
  const errors = Object.fromEntries(
    statuses.map((status) => {
      const known = ERROR_RESPONSES[status];
      if (!known) throw new Error(`${op.operationId}: no error response for ${status}`);
      return [String(status), { $ref: `#/components/responses/${known.name}` }];
    }),
  );
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [...op.tags],
    // Bearer is the document's default; only the others are said per operation.
    ...(op.access === 'bearer' ? {} : { security: SECURITY[op.access] }),
    ...(op.parameters?.length ? { parameters: op.parameters.map(parameter) } : {}),
    ...(b
      ? {
          requestBody: {
            required: b.required,
            content: {
              [b.mediaType]: {
                schema: schemas.ref(b.schema),
                ...(Object.keys(b.examples).length > 0 ? { examples: b.examples } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      [String(r.status)]: {
        description: r.description,
        ...(r.headers?.length
          ? { headers: Object.fromEntries(r.headers.map((h) => [h, HEADERS[h]])) }
          : {}),
        content: { [r.mediaType ?? 'application/json']: { schema: schemas.ref(r.schema) } },
      },
      ...errors,
    },
  };
}

/**
 * The OpenAPI 3.1 document of every operation recorded in `contract`: bodies and answers
 * from their zod schemas, List parameters from their ListSpecs, and the google.rpc.Status
 * of every error answer. Built once per process.
 * @throws Error when two schemas share a name or an operation names an unknown error status.
 */
export function buildOpenApiDocument(contract: Contract, o: DocumentOptions): OpenApiDocument {
  const schemas = new SchemaComponents();
  const status = schemas.ref({ name: 'Status', schema: statusSchema, io: 'output' });
  for (const [name, schema] of [
    ['ErrorInfo', errorInfoSchema],
    ['BadRequest', badRequestSchema],
    ['PreconditionFailure', preconditionFailureSchema],
    ['ResourceInfo', resourceInfoSchema],
  ] as const)
    schemas.ref({ name, schema, io: 'output' });

  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const op of contract.operations) {
    (paths[op.path] ??= {})[op.method] = operation(op, schemas);
    op.tags.forEach((t) => tags.add(t));
  }
  const responses = Object.fromEntries(
    Object.values(ERROR_RESPONSES).map(({ name, description }) => [
      name,
      { description, content: { 'application/json': { schema: status } } },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Arbor API',
      version: 'v2beta1',
      summary: 'Groups, identities, roles and bindings, registry, advisories and an STS.',
      description:
        'The REST API of Arbor (v2beta1 next to v1). Every error is a google.rpc.Status. ' +
        'The same v2beta1 services are served over gRPC on this port (not described here).',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: o.serverUrl }],
    security: [{ bearer: [] }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: { schemas: schemas.toJson(), responses, securitySchemes: SECURITY_SCHEMES },
  };
}
