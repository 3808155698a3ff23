import { startSampling, type RunResult } from './load.js';
import { CONNECTIONS } from './scale.js';

/** One connection of a transport: one request at a time. */
export interface Connection {
  /**
   * Send the request and read its whole answer. Resolves `undefined` for a success, or a
   * short reason (`HTTP 503`, `grpc-status 16: …`) for an answer that is not one; rejects
   * when the connection itself fails.
   */
  call(): Promise<string | undefined>;
  close(): void;
}

/** How requests reach the server: HTTP/1.1 or gRPC over HTTP/2 (bench/transports.ts). */
export interface Transport {
  /** Open one connection and make one call on it (so the clock starts on warm connections). */
  connect(): Promise<Connection>;
}

export interface LoopResult {
  result: RunResult;
  /** What the first failed call said, for the log; undefined when none failed. */
  firstFailure: string | undefined;
}

/**
 * A closed-loop load, shaped like autocannon's (`connections` connections, no pipelining):
 * each connection keeps exactly one request in flight and sends the next as soon as the
 * answer is complete, for `seconds`. Latency is measured per request on this process's
 * monotonic clock; the server, PostgreSQL and this process are sampled as `measure` does,
 * so the two generators' figures read the same. A connection that fails stops (it would
 * otherwise spin on errors); the caller decides what failures mean.
 */
export async function closedLoop(
  transport: Transport,
  seconds: number,
  pid: number,
  db: string,
  connections = CONNECTIONS,
): Promise<LoopResult> {
  const conns = await Promise.all(Array.from({ length: connections }, () => transport.connect()));
  const lat: number[] = [];
  let refused = 0;
  let failed = 0;
  let firstFailure: string | undefined;
  const sampling = startSampling(pid, db);
  const deadline = performance.now() + seconds * 1000;
  try {
    await Promise.all(
      conns.map(async (c) => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          try {
            const why = await c.call();
            if (why === undefined) lat.push(performance.now() - t0);
            else {
              refused++;
              firstFailure ??= why;
            }
          } catch (e) {
            failed++;
            firstFailure ??= (e as Error).message;
            return;
          }
        }
      }),
    );
    return { result: sampling.finish(lat, refused, failed), firstFailure };
  } finally {
    for (const c of conns) c.close();
  }
}
