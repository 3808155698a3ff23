/**
 * The sink's side of the CloudEvents webhook validation handshake ("HTTP 1.1 Web Hooks for
 * Event Delivery", §4 abuse protection). Arbor sends `OPTIONS <sink>` with
 * `WebHook-Request-Origin: <Arbor's host>` and a bearer token naming the subscription and
 * its group; the sink agrees by answering `WebHook-Allowed-Origin` with that origin or `*`,
 * and may limit the rate with `WebHook-Allowed-Rate`. Anything else is no consent: the
 * spec says status codes alone never are (a server that answers every OPTIONS with 200
 * has not agreed to anything). The asynchronous variant (`WebHook-Request-Callback`) is
 * not offered: a sink agrees in its answer or not at all.
 */

export type WebhookConsent =
  | { agreed: true; /** Requests per minute; null: no limit. */ allowedRate: number | null }
  | { agreed: false; why: string };

/** One header value, or undefined when absent or repeated (a repeated one is ambiguous). */
function single(v: string | string[] | undefined): string | undefined {
  if (Array.isArray(v)) return v.length === 1 ? v[0]?.trim() : undefined;
  return v?.trim();
}

/**
 * Whether a validation answer agrees to deliveries from `origin`.
 * @param res the sink's status and headers (lower-case names, as node gives them).
 */
export function webhookConsent(
  res: { status: number; headers: Record<string, string | string[] | undefined> },
  origin: string,
): WebhookConsent {
  const allowed = single(res.headers['webhook-allowed-origin']);
  const refused = (detail: string): WebhookConsent => ({
    agreed: false,
    why: `sink did not agree to the webhook validation handshake (${detail})`,
  });
  if (res.status < 200 || res.status >= 300) return refused(`HTTP ${res.status}`);
  if (allowed === undefined) return refused('no WebHook-Allowed-Origin');
  if (allowed !== '*' && allowed.toLowerCase() !== origin.toLowerCase()) {
    return refused('WebHook-Allowed-Origin names another origin');
  }
  const rate = single(res.headers['webhook-allowed-rate']);
  // The header SHOULD be sent; absent or `*`, there is no limit.
  if (rate === undefined || rate === '*') return { agreed: true, allowedRate: null };
  if (!/^[1-9]\d{0,8}$/.test(rate))
    return refused('WebHook-Allowed-Rate is not a positive integer');
  return { agreed: true, allowedRate: Number(rate) };
}
