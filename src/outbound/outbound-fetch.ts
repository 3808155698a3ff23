import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { withClientSpan } from '../tracing/spans.js';
import { forbiddenAddress } from './address-policy.js';
import { httpClientAttributes } from './http-client-attributes.js';

/** What went wrong, for the server log only: clients are told one thing for all of these. */
export type OutboundFailure =
  'url' | 'address' | 'dns' | 'connect' | 'status' | 'size' | 'timeout' | 'json';

/**
 * An outbound request that failed. `detail` is for the server log; it must never reach a
 * client, or the differences between failures become a map of what Arbor can reach.
 */
export class OutboundError extends Error {
  constructor(
    readonly failure: OutboundFailure,
    readonly detail: string,
  ) {
    super(`outbound ${failure}: ${detail}`);
    this.name = 'OutboundError';
  }
}

export interface OutboundOptions {
  /**
   * Allow `http://` and addresses that are not public (loopback, private, link-local…):
   * development and tests only (ARBOR_ALLOW_INSECURE_ISSUERS).
   */
  allowInsecure: boolean;
  /** The whole exchange: connect, headers and body. */
  timeoutMs?: number;
  /** Largest response body read; a larger one fails without being read to the end. */
  maxBytes?: number;
}

/**
 * The one way Arbor fetches a URL that someone else chose (an identity's issuer, the
 * `jwks_uri` it publishes; later event sinks and registry notifications).
 *
 * - https only (http when insecure is allowed), no credentials in the URL;
 * - the address connected to must be public (`address-policy.ts`). It is checked on the
 *   resolved address, inside the socket's own DNS lookup, so a name that resolves to a
 *   public address when checked and to 127.0.0.1 when connected (DNS rebinding) cannot slip
 *   through; an IP literal, which sockets connect to without a lookup, is checked first;
 * - redirects are not followed (a 3xx is a failure), and time and size are bounded;
 * - Node's HTTP client does not read proxy variables, so none can reroute these requests.
 */
export class OutboundFetcher {
  readonly #o: Required<OutboundOptions>;
  readonly #lookup: LookupFunction | undefined;
  readonly #agents: { http: http.Agent; https: https.Agent };

  /** Requests that reached the network layer (a lookup or a connect), for tests. */
  attempts = 0;

  constructor(o: OutboundOptions) {
    this.#o = { timeoutMs: 5_000, maxBytes: 256 * 1024, ...o };
    this.#lookup = o.allowInsecure ? undefined : guardedLookup;
    // Own agents, so that no pooled socket opened by other code (unchecked) is ever reused.
    const agentOptions = { keepAlive: true, maxSockets: 16, lookup: this.#lookup };
    this.#agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  }

  /**
   * GET `url` and parse the answer as a JSON object.
   *
   * @throws OutboundError for every failure, refused or upstream.
   */
  async getJson(url: string): Promise<Record<string, unknown>> {
    const text = await this.get(url);
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new OutboundError('json', `${url} answered with invalid JSON`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new OutboundError('json', `${url} answered with JSON that is not an object`);
    }
    return v as Record<string, unknown>;
  }

  /**
   * GET `url` (inside an HTTP client span, its `traceparent` sent on, while tracing is on).
   * @throws OutboundError for every failure, refused or upstream.
   */
  get(url: string): Promise<string> {
    const u = this.checkUrl(url);
    return withClientSpan(
      'GET',
      () => httpClientAttributes('GET', url),
      (propagate) => this.fetch(u, url, propagate),
    );
  }

  private fetch(u: URL, url: string, propagate: Record<string, string>): Promise<string> {
    this.attempts++;
    const secure = u.protocol === 'https:';
    return new Promise<string>((resolve, reject) => {
      const req = (secure ? https : http).request(
        u,
        {
          method: 'GET',
          agent: secure ? this.#agents.https : this.#agents.http,
          ...(this.#lookup ? { lookup: this.#lookup } : {}),
          headers: { ...propagate, accept: 'application/json', 'user-agent': 'arbor' },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status !== 200) {
            res.resume();
            fail(new OutboundError('status', `${url} answered ${status}`));
            return;
          }
          const declared = Number(res.headers['content-length']);
          if (declared > this.#o.maxBytes) {
            fail(new OutboundError('size', `${url} announced ${declared} bytes`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > this.#o.maxBytes) fail(new OutboundError('size', `${url} sent too much`));
            else chunks.push(c);
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve(Buffer.concat(chunks).toString('utf8'));
          });
          res.on('error', (e) => fail(asOutbound(e, url)));
        },
      );
      const timer = setTimeout(
        () => fail(new OutboundError('timeout', `${url} took over ${this.#o.timeoutMs} ms`)),
        this.#o.timeoutMs,
      );
      function fail(e: OutboundError): void {
        clearTimeout(timer);
        req.destroy();
        reject(e);
      }
      req.on('error', (e) => fail(asOutbound(e, url)));
      req.end();
    });
  }

  /** @throws OutboundError `url` or `address` before anything touches the network. */
  private checkUrl(url: string): URL {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new OutboundError('url', `not a URL: ${url.slice(0, 200)}`);
    }
    if (u.protocol !== 'https:' && !(this.#o.allowInsecure && u.protocol === 'http:')) {
      throw new OutboundError('url', `scheme ${u.protocol} refused: ${url}`);
    }
    if (u.username !== '' || u.password !== '') {
      throw new OutboundError('url', `credentials in URL refused: ${u.host}`);
    }
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (!this.#o.allowInsecure && isIP(host) !== 0) {
      const why = forbiddenAddress(host);
      if (why) throw new OutboundError('address', `${host} is ${why}`);
    }
    return u;
  }

  /** Close pooled connections (shutdown, tests). */
  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }
}

function asOutbound(e: unknown, url: string): OutboundError {
  if (e instanceof OutboundError) return e;
  const code = (e as NodeJS.ErrnoException).code ?? '';
  const failure: OutboundFailure = code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'dns' : 'connect';
  return new OutboundError(failure, `${url}: ${code || (e as Error).message}`);
}

/**
 * A DNS lookup that refuses names resolving to a non-public address. It runs inside the
 * socket's connect, on the very answer that is connected to. Every address of the answer
 * must be public: a name that mixes public and private addresses is refused whole.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  const family = (options as LookupOptions).family;
  dnsLookup(hostname, { all: true, ...(family ? { family } : {}) }, (err, addresses) => {
    if (err) {
      callback(err, '', 0);
      return;
    }
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => forbiddenAddress(a.address) !== undefined);
    if (bad || list.length === 0) {
      const why = bad ? `${bad.address} is ${forbiddenAddress(bad.address)}` : 'no address';
      callback(new OutboundError('address', `${hostname} resolves to ${why}`), '', 0);
      return;
    }
    if ((options as LookupOptions).all) callback(null, list);
    else callback(null, list[0]!.address, list[0]!.family);
  });
};
