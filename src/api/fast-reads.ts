import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { authenticateRequest, type Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { QueryParams } from '../core/list-request.js';
import { retryAfterOf } from '../core/rpc-error.js';
import { requestIdOf } from '../core/request-id.js';
import { isValidUidp } from '../core/uidp.js';
import { CONSISTENCY_HEADER, withConsistency } from '../resources/consistency.js';
import type { ApiMetrics } from '../metrics/api-metrics.js';
import { compress, encodingFor } from './compression.js';
import { madeOnce } from '../wire/made-once.js';
import { readJsonObjectOf } from './middleware/json-body.js';
import { errorAnswerOf, logRequest } from './middleware/request-context.js';
import { httpServerAttributes, httpSpanName, routeOf } from './middleware/trace-request.js';
import {
  endServerSpan,
  startServerSpan,
  traceFields,
  tracingOn,
  within,
  type ServerSpan,
} from '../tracing/spans.js';

/** A read's answer, serialised once: the JSON text and, for a Get, its entity tag. */
export interface ReadAnswer {
  json: string;
  etag?: string;
}

/**
 * One v2 Get or List as both REST paths run it: the route's Koa handler and the fast path
 * call this same function, so the two cannot answer differently. `uid` is the Get's path
 * parameter; `query` the parsed query string (Koa's shape).
 */
export type Read = (
  p: Principal,
  uid: string | undefined,
  query: QueryParams,
) => Promise<ReadAnswer>;

/**
 * A public GET that reads its own credentials (the registry's token server takes Basic
 * credentials, not the API's bearer token): the route's Koa handler and the fast path call
 * this same function with the raw `Authorization` header ('' when absent, as Koa's
 * `ctx.get` gives it) and the parsed query.
 */
export type PublicRead = (authorization: string, query: QueryParams) => Promise<PublicAnswer>;

/** A public read's answer: the JSON text and the headers its route adds on success. */
export interface PublicAnswer {
  json: string;
  headers: Readonly<Record<string, string>>;
}

/**
 * A POST that only reads (the access check): the route's Koa handler and the fast path
 * call this same function with the principal and the JSON object body (read by the one
 * reader both use, `readJsonObjectOf`); the answer is serialised as Koa serialises it.
 */
export type Call = (p: Principal, body: Record<string, unknown>) => Promise<unknown>;

/** The headers a public route adds to a failure (a challenge), or undefined for none. */
export type FailureHeaders = (e: unknown) => Readonly<Record<string, string>> | undefined;

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface FastReadsDeps {
  authenticator: Authenticator;
  logger: Logger;
  metrics?: ApiMetrics;
  /** With CORS on, a request with an `Origin` goes to Koa, which adds the CORS headers. */
  cors: boolean;
}

/**
 * What every route has: its method and labels, in the metrics and on its server span, made
 * once when it is registered (`labelled`) rather than for every request while tracing is on.
 */
interface Labelled {
  method: 'GET' | 'POST';
  /** The router's template of the route: the metrics label Koa's path would give it. */
  label: string;
  /** The template as `http.route` spells it (`/iam/v2beta1/groups/{uid}`). */
  httpRoute: string;
  /** Its server span's name (`GET /iam/v2beta1/groups/{uid}`). */
  spanName: string;
}

function labelled(method: 'GET' | 'POST', label: string): Labelled {
  return { method, label, httpRoute: routeOf(label), spanName: httpSpanName(method, label) };
}

interface Route extends Labelled {
  read: Read;
}

/** One request's id, and its caller once authenticated (for the access log). */
interface Who {
  requestId: string;
  principal?: Principal;
}

interface CallRoute extends Labelled {
  call: Call;
  /** The route's body limit, as its Koa handler reads it. */
  bodyLimit: number;
}

interface PublicRoute extends Labelled {
  read: PublicRead;
  failureHeaders: FailureHeaders;
}

/**
 * Why: on an authorized Get, Koa's context, its middleware chain and @koa/router's layer
 * scan cost about as much CPU as the service call and the database together. The hot
 * reads (every v2 Get and List) are served here, on the raw request, by the very function
 * the Koa route runs, with the same authentication, error bodies, request id, ETag,
 * compression, metrics and access log.
 *
 * Only the plainest requests are taken: HTTP/1.x GET of a collection path exactly as
 * registered, or of a collection path and a well-formed uid path (nothing percent-encoded,
 * no trailing slash), and no `Origin` when CORS is on. Everything else, and every other
 * method and route, goes to Koa untouched. A compressed answer is sent whole, with its
 * length, where Koa streams it chunked.
 */
export class FastReads {
  /** Requests answered here, not by Koa. */
  readonly stats = { served: 0 };
  readonly #lists = new Map<string, Route>();
  readonly #gets = new Map<string, Route>();
  readonly #public = new Map<string, PublicRoute>();
  readonly #calls = new Map<string, CallRoute>();

  /** koa-compress varies every answer on Accept-Encoding; with CORS on, @koa/cors on Origin. */
  readonly #vary: string;

  constructor(private readonly d: FastReadsDeps) {
    this.#vary = d.cors ? 'Accept-Encoding, Origin' : 'Accept-Encoding';
  }

  /**
   * Serve `collection` (List) or `collection/{uid}` (Get) here too. `label` is the route's
   * template as the router holds it.
   * @throws Error for a collection path the fast path cannot tell apart (not three segments).
   */
  register(kind: 'get' | 'list', collection: string, label: string, read: Read): void {
    if (collectionOf(`${collection}/x`) !== collection)
      throw new Error(`fast reads need /<service>/<version>/<plural> paths, not ${collection}`);
    (kind === 'get' ? this.#gets : this.#lists).set(collection, {
      read,
      ...labelled('GET', label),
    });
  }

  /**
   * Serve the public GET at exactly `path` here too (the registry token server). `label`
   * is the route's template as the router holds it (its path: it has no parameters).
   */
  registerPublic(
    path: string,
    read: PublicRead,
    failureHeaders: FailureHeaders = () => undefined,
  ): void {
    this.#public.set(path, { read, ...labelled('GET', path), failureHeaders });
  }

  /**
   * Serve `POST path` here too: a read that takes a small JSON body (the access check).
   * `label` is the route's template as the router holds it. Only reads: a call writes
   * nothing, so it earns no consistency token and, without the client's, enters no scope.
   */
  registerCall(path: string, label: string, call: Call, bodyLimit: number): void {
    this.#calls.set(path, { call, ...labelled('POST', label), bodyLimit });
  }

  /** What is registered, as `[kind, collection or path]` (tests enumerate it). */
  routes(): Array<['get' | 'list' | 'public' | 'call', string]> {
    return [
      ...[...this.#calls.keys()].map((c): ['call', string] => ['call', c]),
      ...[...this.#public.keys()].map((c): ['public', string] => ['public', c]),
      ...[...this.#gets.keys()].map((c): ['get', string] => ['get', c]),
      ...[...this.#lists.keys()].map((c): ['list', string] => ['list', c]),
    ];
  }

  /** `rest`, with the registered reads answered here first. */
  handler(rest: NodeHandler): NodeHandler {
    return (req, res) => {
      if (!this.tryServe(req, res)) rest(req, res);
    };
  }

  /** Serve `req` if it is a read this path takes; false leaves it untouched for Koa. */
  tryServe(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.httpVersionMajor !== 1) return false;
    if (this.d.cors && req.headers.origin !== undefined) return false;
    const url = req.url ?? '';
    if (req.method === 'POST') {
      // Exactly the path: a query string, a fragment or any other spelling goes to Koa.
      const call = this.#calls.get(url);
      if (call === undefined) return false;
      this.stats.served++;
      void this.serveCall(req, res, call, url);
      return true;
    }
    if (req.method !== 'GET') return false;
    // A fragment is not part of a request target; Koa's parser would drop it, this one not.
    if (url.includes('#')) return false;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const pub = this.#public.get(path);
    if (pub !== undefined) {
      this.stats.served++;
      void this.servePublic(req, res, pub, q < 0 ? '' : url.slice(q + 1), path);
      return true;
    }
    let route = this.#lists.get(path);
    let uid: string | undefined;
    if (route === undefined) {
      const collection = collectionOf(path);
      if (collection === undefined) return false;
      route = this.#gets.get(collection);
      uid = path.slice(collection.length + 1);
      if (route === undefined || !isValidUidp(uid)) return false;
    }
    this.stats.served++;
    void this.serve(req, res, route, uid, q < 0 ? '' : url.slice(q + 1), path);
    return true;
  }

  /**
   * One request as Koa's chain answers it: `produce` gives the answer (and the headers of a
   * success), any failure leaves through `errorAnswerOf` (with `failureHeaders`), and the
   * request is counted and logged as httpMetrics and requestContext count and log it.
   */
  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    route: Labelled,
    path: string,
    produce: (who: Who) => Promise<PublicAnswer | ReadAnswer>,
    opts: { failureHeaders?: FailureHeaders; lean?: boolean } = {},
  ): Promise<void> {
    const requestId = requestIdOf(req.headers['x-request-id']);
    const failureHeaders = opts.failureHeaders ?? (() => undefined);
    // The same server span Koa's traceRequest makes, when tracing is on (asked first: off,
    // nothing of it is made). `lean`: the read calls out to nobody, so a request
    // the sampler drops runs in no trace context (startServerSpan).
    const span = !tracingOn()
      ? undefined
      : startServerSpan(
          route.spanName,
          req.headers,
          requestId,
          () => ({
            ...httpServerAttributes(route.method, path, req.socket.remoteAddress),
            'http.route': route.httpRoute,
          }),
          opts.lean === true,
        );
    return within(span, () =>
      this.answerIn(req, res, { ...route, path, requestId, span }, produce, failureHeaders),
    );
  }

  private async answerIn(
    req: IncomingMessage,
    res: ServerResponse,
    r: Labelled & { path: string; requestId: string; span?: ServerSpan },
    produce: (who: Who) => Promise<PublicAnswer | ReadAnswer>,
    failureHeaders: FailureHeaders,
  ): Promise<void> {
    const { method, path, requestId } = r;
    const started = performance.now();
    let child: Logger | undefined;
    const log = () => (child ??= this.d.logger.child({ requestId, ...traceFields(r.span) }));
    const who: Who = { requestId };
    let status = 200;
    try {
      try {
        const answer = await produce(who);
        for (const [k, v] of Object.entries('headers' in answer ? answer.headers : {}))
          res.setHeader(k, v);
        await send(req, res, 200, requestId, answer, this.#vary);
      } catch (e) {
        const failure = errorAnswerOf(e, log);
        status = failure.status;
        // Headers of a success never reach a failure: `produce` threw before returning them.
        for (const [k, v] of Object.entries(failureHeaders(e) ?? {})) res.setHeader(k, v);
        const retry = retryAfterOf(failure.body);
        if (retry !== undefined) res.setHeader('retry-after', String(retry));
        await send(req, res, status, requestId, { json: JSON.stringify(failure.body) }, this.#vary);
      }
    } catch (e) {
      // Only a failure to write the answer lands here: the connection is beyond saving.
      log().error({ err: e }, 'unhandled error');
      status = 500;
      res.destroy();
    } finally {
      const m = this.d.metrics;
      if (m) {
        const labels = { route: r.label, method, code: String(status) };
        m.httpRequests.inc(labels);
        m.observe(m.httpDuration, labels, (performance.now() - started) / 1000);
      }
      logRequest(this.d.logger, log, method, path, status, started, who.principal);
      endServerSpan(r.span, () => ({ 'http.response.status_code': status }), status >= 500);
    }
  }

  /** The bearer token's principal, as Koa's `authn` middleware finds it. */
  private async authenticate(req: IncomingMessage, who: Who): Promise<Principal> {
    who.principal = await authenticateRequest(
      this.d.authenticator,
      req.headers.authorization || undefined,
      'rest',
      who.requestId,
    );
    return who.principal;
  }

  private serve(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    uid: string | undefined,
    search: string,
    path: string,
  ): Promise<void> {
    return this.answer(
      req,
      res,
      route,
      path,
      async (who) => {
        const principal = await this.authenticate(req, who);
        // Reads earn no token; the client's (if any) says how fresh a replica must be.
        const token = req.headers['arbor-consistency-token'];
        return withConsistency(
          typeof token === 'string' ? token : undefined,
          () => route.read(principal, uid, queryOf(search)),
          true,
        );
      },
      LEAN,
    );
  }

  /**
   * A POST that reads: authenticated, then its body read as Koa's route reads it (Koa's
   * gate runs before the route), in the scope of the client's consistency token if any.
   */
  private serveCall(
    req: IncomingMessage,
    res: ServerResponse,
    route: CallRoute,
    path: string,
  ): Promise<void> {
    return this.answer(
      req,
      res,
      route,
      path,
      (who) =>
        consistent(
          req,
          async () => {
            const principal = await this.authenticate(req, who);
            const body = await readJsonObjectOf(req, route.bodyLimit);
            return { json: jsonOf(await route.call(principal, body)), headers: {} };
          },
          true,
        ),
      LEAN,
    );
  }

  /** A public read: as `serve`, without the bearer token (the read takes its own credentials). */
  private servePublic(
    req: IncomingMessage,
    res: ServerResponse,
    route: PublicRoute,
    search: string,
    path: string,
  ): Promise<void> {
    return this.answer(
      req,
      res,
      route,
      path,
      () => consistent(req, () => route.read(req.headers.authorization ?? '', queryOf(search))),
      // Not lean: the registry's token server may fetch a workload issuer's keys.
      { failureHeaders: route.failureHeaders },
    );
  }
}

/** How gets, lists and calls are answered: reads that call out to nobody. */
const LEAN = { lean: true } as const;

/**
 * As Koa's consistency middleware: the client's token in, and on success the token its
 * writes earned (the STS's last-seen write, with read replicas) out among the headers.
 */
async function consistent(
  req: IncomingMessage,
  produce: () => Promise<PublicAnswer>,
  readOnly = false,
): Promise<PublicAnswer> {
  const token = req.headers['arbor-consistency-token'];
  return withConsistency(
    typeof token === 'string' ? token : undefined,
    async (scope) => {
      const a = await produce();
      return scope.written === undefined
        ? a
        : { ...a, headers: { ...a.headers, [CONSISTENCY_HEADER]: scope.written } };
    },
    readOnly,
  );
}

/** `JSON.stringify(answer)`, made once for a frozen (shared) answer (wire/made-once.ts). */
const jsonOf = madeOnce((answer: unknown): string => JSON.stringify(answer));

/** `/a/b/c` of `/a/b/c/…`, or undefined when the path has fewer segments. */
function collectionOf(path: string): string | undefined {
  const second = path.indexOf('/', 1);
  const third = second < 0 ? -1 : path.indexOf('/', second + 1);
  const fourth = third < 0 ? -1 : path.indexOf('/', third + 1);
  return fourth < 0 ? undefined : path.slice(0, fourth);
}

/** The query string as Koa parses it (`ctx.query`): a repeated key becomes an array. */
function queryOf(search: string): QueryParams {
  const out: Record<string, string | string[]> = {};
  if (search === '') return out;
  const params = new URLSearchParams(search);
  for (const key of params.keys()) {
    const values = params.getAll(key);
    Object.defineProperty(out, key, {
      value: values.length <= 1 ? values[0] : values,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}

/** The answer with the headers Koa's chain would give it (compressed as koa-compress would). */
async function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  requestId: string,
  answer: ReadAnswer,
  vary: string,
): Promise<void> {
  res.statusCode = status;
  res.setHeader('Vary', vary);
  res.setHeader('X-Request-Id', requestId);
  if (answer.etag !== undefined) res.setHeader('ETag', answer.etag);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const length = Buffer.byteLength(answer.json);
  const encoding = encodingFor(req.headers['accept-encoding'], length);
  if (encoding === undefined) {
    // A string body goes out in one write with the head, as Koa's does.
    res.setHeader('Content-Length', length);
    res.end(answer.json);
    return;
  }
  const body = await compress(Buffer.from(answer.json), encoding);
  res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
