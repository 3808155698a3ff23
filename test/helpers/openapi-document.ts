import type Router from '@koa/router';
import type Koa from 'koa';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document the tests read. */
export interface Doc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
  [k: string]: unknown;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  example?: unknown;
  schema: Record<string, unknown>;
}

export interface Operation {
  operationId: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every operation of the document, with its method and path. */
export function operationsOf(doc: Doc): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method]! })),
  );
}

/**
 * What the app's routers really serve, read from @koa/router's own layers (not from the
 * contract the document is built from): `METHOD /path` with the router's `{*uid}` spelt
 * `{uid}` and its escaped `\:` as `:`. HEAD is the router's echo of GET.
 */
export function mountedRoutes(app: Koa): string[] {
  const routers = app.middleware
    .map((m) => (m as { router?: Router }).router)
    .filter((r): r is Router => r !== undefined);
  return routers.flatMap((r) =>
    r.stack.flatMap((layer) => {
      const path = String(layer.path)
        .replace(/\{\*(\w+)\}/g, '{$1}')
        .replaceAll('\\:', ':');
      return layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${path}`);
    }),
  );
}

/**
 * A JSON Schema validator of the document's components (draft 2020-12, formats checked):
 * `validate(schema)` compiles an operation's response schema (a `$ref` into components).
 */
const BASE = 'https://arbor.test/components';

export function schemaValidator(doc: Doc): (schema: unknown) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const defs = JSON.parse(
    JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', `${BASE}#/$defs/`),
  ) as Record<string, unknown>;
  ajv.addSchema({ $id: BASE, $defs: defs });
  return (schema) =>
    ajv.compile(
      JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', `${BASE}#/$defs/`)),
    );
}
