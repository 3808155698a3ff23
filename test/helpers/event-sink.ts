import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** Whether this request was answered 2xx (counted as delivered). */
  accepted: boolean;
}

/** `up`: 204; `down`: 503 for every request. */
export type SinkMode = 'up' | 'down';

export interface EventSink {
  url: string;
  /** Every request, in arrival order. */
  requests: Received[];
  /** The requests answered 2xx. */
  accepted(): Received[];
  setMode(m: SinkMode): void;
  close(): Promise<void>;
}

/** A real HTTP receiver of CloudEvents on a loopback port, answering after `delayMs`. */
export async function startEventSink(mode: SinkMode = 'up', delayMs = 0): Promise<EventSink> {
  const requests: Received[] = [];
  let current = mode;
  const server: Server = createServer((req, res) => {
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
    accepted: () => requests.filter((r) => r.accepted),
    setMode: (m) => {
      current = m;
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
