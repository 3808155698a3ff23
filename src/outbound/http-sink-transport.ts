import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { withClientSpan } from '../tracing/spans.js';
import { httpClientAttributes } from './http-client-attributes.js';
import { isPrivateAddress } from './sink-address-policy.js';

export interface HttpSinkTransportOptions {
  /** ARBOR_ALLOW_PRIVATE_SINKS: let sinks resolve to loopback and private addresses. */
  allowPrivate: boolean;
  /**
   * ARBOR_EVENTS_SINK_TIMEOUT_MS: the whole request, from the lookup to the response
   * status. Not an idle timeout: a sink that trickles bytes does not extend it.
   */
  timeoutMs?: number;
}

/** A sink's answer: its status and headers. The body is never read. */
export interface SinkAnswer {
  status: number;
  headers: IncomingHttpHeaders;
}

/**
 * Response bytes read (and thrown away) after the status so that a well-behaved sink's
 * connection can be reused; a larger body costs the connection instead.
 */
const DISCARD_LIMIT = 64 * 1024;

/**
 * The default sink transport: node's HTTP client with the outbound-address policy applied in
 * the DNS lookup of the connection itself, so the address checked is the address connected
 * to (no window for DNS rebinding between a check and the connect). Redirects are not
 * followed: a sink answers for itself.
 *
 * A request is over when the response status arrives: the body is never waited for, so a
 * sink that answers and then trickles its body costs its own connection, not the worker's
 * time. The body is discarded in the background, bounded by the same deadline and by
 * DISCARD_LIMIT, then the connection is destroyed.
 *
 * It fits the `SinkTransport` interface that the delivery worker declares
 * (resources/events/sink-transport.ts) by shape: outbound/ knows no resources, and
 * compose.ts, which hands it to the worker, is where the compiler checks the fit.
 */
export class HttpSinkTransport {
  readonly #timeoutMs: number;
  // Own agents, so that no pooled socket opened by other code (unchecked) is ever reused.
  readonly #agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly o: HttpSinkTransportOptions) {
    this.#timeoutMs = o.timeoutMs ?? 10_000;
    const agentOptions = { keepAlive: true, lookup: this.lookup };
    this.#agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  }

  private readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const allowed = this.o.allowPrivate
        ? addresses
        : addresses.filter((a) => !isPrivateAddress(a.address));
      const first = allowed[0];
      if (!first) {
        const e = new Error(`sink address of ${hostname} is not allowed (private or loopback)`);
        return callback(Object.assign(e, { code: 'EADDRNOTALLOWED' }), '', 0);
      }
      if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      } else callback(null, first.address, first.family);
    });
  };

  post(
    url: string,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<SinkAnswer> {
    return this.request('POST', url, headers, body, signal);
  }

  options(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<SinkAnswer> {
    return this.request('OPTIONS', url, headers, undefined, signal);
  }

  /** Close pooled connections (shutdown, tests). */
  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }

  /**
   * The request inside an HTTP client span when tracing is on, its `traceparent` sent to the
   * sink with the caller's headers (which cannot replace it: the trace is the server's).
   */
  private request(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<SinkAnswer> {
    return withClientSpan(
      method,
      () => httpClientAttributes(method, url),
      (propagate) => this.send(method, url, { ...headers, ...propagate }, body, signal),
      (a) => a.status,
    );
  }

  private send(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<SinkAnswer> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    // A literal address never reaches lookup(): judge it here.
    if (!this.o.allowPrivate && /^[\d.]+$|:/.test(host) && isPrivateAddress(host)) {
      return Promise.reject(new Error('sink address is not allowed (private or loopback)'));
    }
    if (signal?.aborted) return Promise.reject(new Error('delivery stopped'));
    const secure = u.protocol === 'https:';
    const ms = this.#timeoutMs;
    return new Promise((resolve, reject) => {
      let answered = false;
      const req = (secure ? https : http).request(
        u,
        {
          method,
          agent: secure ? this.#agents.https : this.#agents.http,
          headers: {
            ...headers,
            ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
          },
        },
        (res) => {
          answered = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers });
          let read = 0;
          res.on('data', (c: Buffer) => {
            read += c.length;
            if (read > DISCARD_LIMIT) req.destroy();
          });
          res.on('error', () => undefined); // the answer already stands
          res.on('close', done);
        },
      );
      // One deadline for the whole request (lookup, connect, TLS, status) and for
      // discarding the body afterwards: nothing a sink sends extends it.
      const timer = setTimeout(() => {
        req.destroy(new Error(`sink did not answer within ${ms} ms`));
      }, ms);
      const stop = () => req.destroy(new Error('delivery stopped'));
      signal?.addEventListener('abort', stop, { once: true });
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
      }
      req.on('error', (e) => {
        done();
        if (!answered) reject(e);
      });
      req.on('close', () => {
        if (!answered) done();
      });
      req.end(body);
    });
  }
}
