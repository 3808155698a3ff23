import type { SignedApiToken } from './token-issuer.js';

/** How many issued tokens wait to be written, at most, by default. */
const MAX_PENDING_ISSUED = 20_000;

/**
 * The record of issued API tokens, kept cheaply: signing a token (the STS answers
 * thousands a second) only appends its jti, identity, parents and bounds to an array in
 * memory; nothing is awaited on the request path. A background flush
 * (resources/oauth/issued-token-flusher.ts) drains it and writes batches.
 *
 * Bounded: at most `maxPending` tokens wait; beyond that a token is not recorded
 * (`stats.dropped` counts them). An unrecorded token is not listed by `arbor auth
 * sessions`, and nothing else: it is verified, revoked (`/oauth2/revoke` with the token)
 * and refused when its parent is revoked exactly as any other, since those rest on its
 * claims, never on this record.
 */
export class IssuedTokenRecorder {
  readonly stats = { recorded: 0, dropped: 0 };
  #pending: SignedApiToken[] = [];

  constructor(readonly maxPending = MAX_PENDING_ISSUED) {}

  /** A token was signed now (TokenIssuer.onSigned). */
  issued(t: SignedApiToken): void {
    if (this.#pending.length >= this.maxPending) {
      this.stats.dropped++;
      return;
    }
    this.#pending.push(t);
    this.stats.recorded++;
  }

  get pending(): number {
    return this.#pending.length;
  }

  /** Take everything recorded so far. */
  drain(): SignedApiToken[] {
    const out = this.#pending;
    this.#pending = [];
    return out;
  }

  /** Put back a batch that could not be written, as far as the bound allows. */
  restore(batch: readonly SignedApiToken[]): void {
    const room = Math.max(0, this.maxPending - this.#pending.length);
    this.stats.dropped += Math.max(0, batch.length - room);
    this.#pending = [...batch.slice(0, room), ...this.#pending];
  }
}
