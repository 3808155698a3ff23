import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import type { z } from 'zod';
import type { Call, FastReads, Read } from '../fast-reads.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * How an operation is authenticated: an Arbor bearer token, nothing (the credential, if
 * any, is checked by the operation itself, like the STS's upstream token), or the two
 * registry credentials (Basic at the token server, the notification secret at the hook).
 */
export type Access = 'bearer' | 'public' | 'registryBasic' | 'registryNotify';

/** A JSON Schema fragment written by hand (query parameters, headers). */
export type JsonSchema = Record<string, unknown>;

/** A zod schema that becomes `#/components/schemas/<name>` in the document. */
export interface NamedSchema {
  name: string;
  schema: z.ZodType;
  /** `input` for request bodies (transforms show what the client sends). */
  io: 'input' | 'output';
  /** Schemas inside this one that are components of their own (a List's item). */
  parts?: readonly NamedSchema[];
}

export interface ParameterContract {
  name: string;
  in: 'path' | 'query' | 'header';
  description: string;
  required?: boolean;
  schema: JsonSchema;
  /** Valid on a fresh server once the example uids are substituted (see examples.ts). */
  example?: unknown;
  /** A parameter that may be repeated (`scope=a&scope=b`). */
  explode?: boolean;
}

export interface Example {
  summary: string;
  value: unknown;
}

export interface RequestBodyContract {
  /** `application/x-ndjson`: a stream of JSON values, one a line, each of `schema`. */
  mediaType: 'application/json' | 'application/x-www-form-urlencoded' | 'application/x-ndjson';
  schema: NamedSchema;
  required: boolean;
  examples: Record<string, Example>;
}

export interface ResponseContract {
  status: 200;
  description: string;
  schema: NamedSchema;
  /** JSON unless said: a stream of JSON lines, or a file. */
  mediaType?: 'application/json' | 'application/x-ndjson' | 'application/gzip';
  /** Response headers the operation sets. */
  headers?: readonly ('ETag' | 'Cache-Control' | 'Arbor-Consistency-Token')[];
}

/** One HTTP operation as the document shows it. */
export interface OperationContract {
  method: HttpMethod;
  /** OpenAPI path template; every parameter is a uid path and may hold `/`. */
  path: string;
  /** Stable and unique: `iam.groups.list`, `iam.v1.groups.get`, `sts.exchange`. */
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  access: Access;
  parameters?: readonly ParameterContract[];
  requestBody?: RequestBodyContract;
  response: ResponseContract;
  /** HTTP statuses of the google.rpc.Status answers the operation gives. */
  errors: readonly number[];
}

/**
 * Every operation the process serves, recorded by the code that mounts it, so the
 * document (document.ts) cannot miss a route or describe one that is not there.
 */
export class Contract {
  readonly #ops: OperationContract[] = [];
  readonly #ids = new Set<string>();
  readonly #routes = new Set<string>();

  /** @throws Error when the operation id or the method and path are taken already. */
  add(op: OperationContract): void {
    const route = `${op.method} ${op.path}`;
    if (this.#ids.has(op.operationId)) throw new Error(`duplicate operationId ${op.operationId}`);
    if (this.#routes.has(route)) throw new Error(`duplicate operation ${route}`);
    this.#ids.add(op.operationId);
    this.#routes.add(route);
    this.#ops.push(op);
  }

  get operations(): readonly OperationContract[] {
    return this.#ops;
  }
}

/**
 * The router's spelling of an OpenAPI path: a parameter takes the rest of the path
 * (`{*uid}`: uids hold `/`), and `:` is literal (`groupInvites:redeem`), not a parameter.
 */
export function routerPath(path: string): string {
  return path.replaceAll(':', '\\:').replace(/\{(\w+)\}/g, '{*$1}');
}

/** Where routes go: the router that serves them and the contract that documents them. */
export interface RouteTarget {
  router: Router;
  contract: Contract;
  /** Where hot reads (and the registry token server) are also served outside Koa. */
  fast?: FastReads;
}

/**
 * A Get or List that the fast path may serve too, by the same function as its route; or a
 * POST that only reads (`call`, with the body limit its route reads the body with).
 */
export type FastRead =
  { kind: 'get' | 'list'; read: Read } | { kind: 'call'; call: Call; bodyLimit: number };

/**
 * Mount `handler` and record the operation: the one way a route is added, so that what is
 * served and what the document says are the same list.
 * @throws Error when the operation is recorded already (see Contract.add).
 */
export function mountOperation(
  t: RouteTarget,
  op: OperationContract,
  handler: RouterMiddleware,
  fast?: FastRead,
): void {
  t.contract.add(op);
  const path = routerPath(op.path);
  // What router.get/post/… do, for a method chosen at run time.
  t.router.register(path, [op.method], handler, { ...t.router.opts });
  if (!fast || !t.fast) return;
  if (fast.kind === 'call') {
    if (op.method !== 'post' || op.path.includes('{'))
      throw new Error(`${op.operationId}: a fast call is a POST of one fixed path`);
    t.fast.registerCall(op.path, path, fast.call, fast.bodyLimit);
  } else {
    if (op.method !== 'get') throw new Error(`${op.operationId}: only reads take the fast path`);
    if (fast.kind === 'get' && !op.path.endsWith('/{uid}'))
      throw new Error(`${op.operationId}: a fast Get is <collection>/{uid}`);
    const collection = fast.kind === 'get' ? op.path.slice(0, -'/{uid}'.length) : op.path;
    t.fast.register(fast.kind, collection, path, fast.read);
  }
}
