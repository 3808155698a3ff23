import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import {
  TicketKeyRing,
  fromTicketKeyMessage,
  rotateTicketKeys,
  ticketKeyMessage,
  type TicketKeyMessage,
  type TicketKeySource,
} from './tls-ticket-keys.js';

/** A worker asks for the keys in force once it listens for them; the primary answers. */
const ASK = 'arbor:ticket-keys?';

/**
 * The cluster primary's part: the keys of `source`, rotated on its clock, sent to every
 * worker at each rotation and to any worker that asks (one just started or restarted, so a
 * replaced worker opens the tickets its predecessor sealed). The keys cross only the IPC
 * channel between the primary and its own children; they are never logged nor written.
 * @returns a function that stops rotating.
 */
export function shareTicketKeys(
  source: TicketKeySource,
  logger: Logger,
  now: () => number = Date.now,
): () => void {
  let message: TicketKeyMessage | undefined;
  const onMessage = (w: Worker, m: unknown) => {
    if (m === ASK && message && w.isConnected()) w.send(message);
  };
  cluster.on('message', onMessage);
  const stop = rotateTicketKeys(
    source,
    (set) => {
      const first = message === undefined;
      message = ticketKeyMessage(set);
      // The period number only: it says when, and nothing about the keys.
      if (!first) logger.info({ period: set.period }, 'TLS session ticket keys rotated');
      for (const w of Object.values(cluster.workers ?? {})) if (w?.isConnected()) w.send(message);
    },
    now,
  );
  return () => {
    stop();
    cluster.off('message', onMessage);
  };
}

/**
 * A worker's part: a ring holding the primary's keys, resolved once the first set has
 * arrived (so no connection is served with keys the other workers lack), and kept current
 * as the primary rotates them.
 */
export function ticketKeysFromPrimary(): Promise<TicketKeyRing> {
  const ring = new TicketKeyRing();
  return new Promise((resolve) => {
    process.on('message', (m: unknown) => {
      const set = fromTicketKeyMessage(m);
      if (!set) return;
      ring.set(set);
      resolve(ring);
    });
    // Asked only now that the answer has a listener: a message sent earlier would be lost.
    process.send?.(ASK);
  });
}
