/** A sink's answer: its status and headers. The body is never read. */
export interface SinkResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/** Sends one request to a sink. The outbound-address policy lives behind this. */
export interface SinkTransport {
  /**
   * POST `body` to `url`.
   * @returns the response status, as soon as it arrives. @throws for anything that got no
   *   HTTP answer (refused by the address policy, DNS, connect, deadline, `signal`): each
   *   counts as a failed attempt.
   */
  post(
    url: string,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<SinkResponse>;
  /** The webhook validation request (an `OPTIONS` to `url`). @throws like `post`. */
  options(
    url: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<SinkResponse>;
}

/** What every token a sink receives says: which subscription, under which group. */
export interface SinkClaims {
  /** The subscription uid. */
  sub: string;
  /** The group the subscription hangs under: receivers pin it with `sub`. */
  subscription_group: string;
}

/** Signs the bearer token of one request to a sink: Arbor's issuer key, `aud` = the sink. */
export interface DeliverySigner {
  /**
   * A delivery carries `jti` (the event id) and `body_sha256`; the validation request has
   * no `body_sha256` (and a random `jti`), so its token never verifies as a delivery's.
   */
  sign(sink: string, claims: SinkClaims & { jti?: string; body_sha256?: string }): Promise<string>;
}
