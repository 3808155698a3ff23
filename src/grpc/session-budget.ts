import type { Http2Session } from 'node:http2';
import { Code, ConnectError } from '@connectrpc/connect';

/**
 * The request bytes that the open streams of one HTTP/2 session hold at once, against a
 * cap. Whoever reads a request body (the unary fast path, the RPC adapter) counts each
 * chunk here before keeping it and gives the whole back when its stream closes, so one
 * connection cannot make the process hold more than the cap however many streams it
 * opens. The listener makes one per session.
 */
export class SessionBudget {
  held = 0;

  constructor(readonly max: number) {}

  /** Count `n` more bytes; false, counting nothing, when that would pass the cap. */
  take(n: number): boolean {
    if (this.held + n > this.max) return false;
    this.held += n;
    return true;
  }

  release(n: number): void {
    this.held -= n;
  }
}

const budgets = new WeakMap<Http2Session, SessionBudget>();

/** The budget of `session` (none for HTTP/1.1, or a session the listener did not make). */
export function budgetOf(session: Http2Session | undefined): SessionBudget | undefined {
  return session === undefined ? undefined : budgets.get(session);
}

export function setBudget(session: Http2Session, budget: SessionBudget): void {
  budgets.set(session, budget);
}

/** What a stream that would pass its session's budget is answered. */
export function overBudget(max: number): ConnectError {
  return new ConnectError(
    `this connection holds more than ${max} bytes of unfinished requests`,
    Code.ResourceExhausted,
  );
}
