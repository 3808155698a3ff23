import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress } from './sink-address-policy.js';

export interface HttpSinkTransportOptions {
  /** ARBOR_ALLOW_PRIVATE_SINKS: let sinks resolve to loopback and private addresses. */
  allowPrivate: boolean;
  /** Whole-request deadline. */
  timeoutMs?: number;
}

/**
 * The default sink transport: node's HTTP client with the outbound-address policy applied in
 * the DNS lookup of the connection itself, so the address checked is the address connected
 * to (no window for DNS rebinding between a check and the connect). Redirects are not
 * followed: a sink answers for itself.
 *
 * It fits the `SinkTransport` interface that the delivery worker declares
 * (resources/events/delivery-worker.ts) by shape: outbound/ knows no resources, and
 * compose.ts, which hands it to the worker, is where the compiler checks the fit.
 */
export class HttpSinkTransport {
  constructor(private readonly o: HttpSinkTransportOptions) {}

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

  post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number }> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    // A literal address never reaches lookup(): judge it here.
    if (!this.o.allowPrivate && /^[\d.]+$|:/.test(host) && isPrivateAddress(host)) {
      return Promise.reject(new Error('sink address is not allowed (private or loopback)'));
    }
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const opts: RequestOptions = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: this.lookup,
      timeout: this.o.timeoutMs ?? 10_000,
    };
    return new Promise((resolve, reject) => {
      const req = send(u, opts, (res) => {
        // Drain and discard: only the status matters, and the socket goes back to the pool.
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('sink did not answer in time')));
      req.on('error', reject);
      req.end(body);
    });
  }
}
