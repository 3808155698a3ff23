import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** Whether this request was answered 2xx (counted as delivered). */
  accepted: boolean;
}

/**
 * Settings for a test server whose worker delivers fast: private sinks, short polls and
 * retries (tests wait on behaviour, not on timers), and no dead letter by accident.
 */
export const FAST_DELIVERY: Readonly<Record<string, string>> = {
  ARBOR_ALLOW_PRIVATE_SINKS: 'true',
  ARBOR_EVENTS_POLL_MS: '50',
  ARBOR_EVENTS_BACKOFF_MS: '50',
  ARBOR_EVENTS_BACKOFF_MAX_MS: '200',
  ARBOR_EVENTS_MAX_ATTEMPTS: '1000000',
};

/** `up`: 204; `down`: 503 for every delivery (the handshake is answered either way). */
export type SinkMode = 'up' | 'down';

/**
 * How the sink answers the webhook validation handshake (`OPTIONS`): `agree` echoes the
 * origin in `WebHook-Allowed-Origin`, `refuse` answers 200 without it (no consent).
 */
export type Consent = 'agree' | 'refuse';

export interface EventSink {
  url: string;
  /** Every delivery (POST), in arrival order. */
  requests: Received[];
  /** Every validation request (OPTIONS), in arrival order. */
  handshakes: Received[];
  /** The requests answered 2xx. */
  accepted(): Received[];
  setMode(m: SinkMode): void;
  setConsent(c: Consent): void;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver of CloudEvents on a loopback port, answering after `delayMs`. It
 * answers the webhook validation handshake (agreeing, unless told otherwise).
 */
export async function startEventSink(mode: SinkMode = 'up', delayMs = 0): Promise<EventSink> {
  const requests: Received[] = [];
  const handshakes: Received[] = [];
  let current = mode;
  let consent: Consent = 'agree';
  const server: Server = createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      req.resume();
      const origin = req.headers['webhook-request-origin'];
      const agreed = consent === 'agree' && typeof origin === 'string';
      handshakes.push({ headers: req.headers, raw: '', body: undefined, accepted: agreed });
      res.setHeader('allow', 'POST, OPTIONS');
      if (agreed) {
        res.setHeader('webhook-allowed-origin', origin);
        res.setHeader('webhook-allowed-rate', '*');
      }
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const accepted = current === 'up';
      const answer = () => {
        // Recorded when answered: a receiver counts what it acknowledged.
        requests.push({ headers: req.headers, raw, body, accepted });
        res.statusCode = accepted ? 204 : 503;
        res.end();
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    requests,
    handshakes,
    accepted: () => requests.filter((r) => r.accepted),
    setMode: (m) => {
      current = m;
    },
    setConsent: (c) => {
      consent = c;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Poll `check` until it returns a truthy value; generous by default for a loaded machine. */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 90_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
