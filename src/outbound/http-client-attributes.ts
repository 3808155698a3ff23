import type { Attributes } from '@opentelemetry/api';

/**
 * The attributes of an HTTP client span (semantic conventions, HTTP client). `url.full`
 * is the scheme, host and path only: a sink's or issuer's query string and user info may
 * hold a secret, and a span is read by more people than the resource is.
 */
export function httpClientAttributes(method: string, url: string): Attributes {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { 'http.request.method': method };
  }
  const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return {
    'http.request.method': method,
    'server.address': u.hostname,
    'server.port': port,
    'url.full': `${u.protocol}//${u.host}${u.pathname}`,
  };
}
