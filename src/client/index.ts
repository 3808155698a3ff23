import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './openapi-types.js';

export type { components, operations, paths } from './openapi-types.js';

/** A google.rpc.Status: the `error` of every refused call. */
export type Status = components['schemas']['Status'];

/** The typed client: `GET`, `POST`, `PATCH`, `PUT`, `DELETE` over the document's paths. */
export type ArborClient = Client<paths>;

export interface ArborClientOptions {
  /** An Arbor API token (or the admin token), sent as `Authorization: Bearer`. */
  token?: string;
  /** Another fetch (a proxy, a test double); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/**
 * Uids are paths (`<org>/<child>`) and the API takes them as they are, slashes and all;
 * any other character a path parameter holds is escaped.
 */
function pathOf(template: string, params: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) =>
    String(params[name])
      .split('/')
      .map((part) => encodeURIComponent(part))
      .join('/'),
  );
}

/**
 * A client of the Arbor API at `baseUrl`, typed from its OpenAPI document: paths, query
 * parameters, bodies and answers are checked by the compiler, and `error` is a Status.
 *
 * ```ts
 * const arbor = createArborClient('http://localhost:8080', { token });
 * const { data, error } = await arbor.GET('/iam/v2beta1/groups', {
 *   params: { query: { 'uidp.children_of': org, page_size: 50 } },
 * });
 * ```
 * A call never throws for an HTTP status, only when the server cannot be reached.
 */
export function createArborClient(baseUrl: string, o: ArborClientOptions = {}): ArborClient {
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(o.fetch ? { fetch: o.fetch } : {}),
    ...(o.token === undefined ? {} : { headers: { authorization: `Bearer ${o.token}` } }),
    pathSerializer: pathOf,
  });
}

/** A form body (the STS's POST): what `bodySerializer` takes for urlencoded requests. */
export function formBody(body: Record<string, string | readonly string[] | undefined>): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) {
    for (const one of typeof v === 'string' ? [v] : (v ?? [])) form.append(k, one);
  }
  return form.toString();
}
