/** The latest use of each binding and identity since the last drain, by uid (epoch ms). */
export interface UsageBatch {
  bindings: ReadonlyMap<string, number>;
  identities: ReadonlyMap<string, number>;
  /**
   * A stored time is moved only by a use at least this much later (ms): the store applies
   * the same rule, so that several processes together write a row at most this often.
   */
  resolutionMs: number;
}

/** How far a last-used time may lag behind the latest use, by default: one minute. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** One kind's uses waiting to be written, and the times last written for it. */
class Ledger {
  pending = new Map<string, number>();
  /** uid → the latest time written for it within the resolution (older entries are dropped). */
  readonly written = new Map<string, number>();
}

/**
 * Last used, kept cheaply: a decision that a role binding grants the holder's own request,
 * or an identity's authentication, only sets the latest instant in a map in memory (no
 * I/O, nothing awaited on the request path). A background flush (`UsageFlusher`) drains
 * the maps and writes them in one batched statement every few seconds, so a crash loses at
 * most that interval of last-used times, and never a grant (nothing here decides access).
 *
 * Coarse on purpose: a last-used time answers "unused for 90 days?", not "when exactly?".
 * A use within `resolutionMs` of the time last written for the same uid is not noted at
 * all, and the store moves a row only by at least as much, so a binding in constant use
 * costs one row write a minute (by default), however many requests it grants.
 *
 * Bounded by what exists: a binding uid comes from the grant source and an identity uid
 * from a verified credential, never from request input, so the maps hold at most one
 * entry per binding and identity used within the resolution or since the last flush.
 */
export class UsageRecorder {
  readonly stats = { recorded: 0 };
  readonly #bindings = new Ledger();
  readonly #identities = new Ledger();

  constructor(
    private readonly now: () => number = Date.now,
    readonly resolutionMs = LAST_USED_RESOLUTION_MS,
  ) {}

  /** A role binding granted (part of) a decision on its holder's own request now. */
  bindingUsed(uid: string, at = this.now()): void {
    this.#note(this.#bindings, uid, at);
  }

  /**
   * The bindings of a decision's grants granted it now (one clock read for them all, and no
   * array made: this runs on every allowed decision, even one answered from memory).
   */
  grantsUsed(grants: ReadonlyArray<{ readonly bindingUid: string }>): void {
    const at = this.now();
    for (let i = 0; i < grants.length; i++) this.#note(this.#bindings, grants[i]!.bindingUid, at);
  }

  /** An identity authenticated now (STS exchange, API token, registry credentials). */
  identityUsed(uid: string, at = this.now()): void {
    this.#note(this.#identities, uid, at);
  }

  #note(l: Ledger, uid: string, at: number): void {
    const written = l.written.get(uid);
    if (written !== undefined && at - written < this.resolutionMs) return;
    const had = l.pending.get(uid);
    if (had !== undefined && had >= at) return;
    l.pending.set(uid, at);
    this.stats.recorded++;
  }

  /** Whether anything waits to be written. */
  get pending(): boolean {
    return this.#bindings.pending.size > 0 || this.#identities.pending.size > 0;
  }

  /** Take everything recorded so far, leaving the maps empty. */
  drain(): UsageBatch {
    const batch = {
      bindings: this.#bindings.pending,
      identities: this.#identities.pending,
      resolutionMs: this.resolutionMs,
    };
    this.#bindings.pending = new Map();
    this.#identities.pending = new Map();
    return batch;
  }

  /**
   * A drained batch was written: its uids are not noted again until a use `resolutionMs`
   * later. Entries older than that suppress nothing more and are dropped here, so what is
   * kept is at most what was written within the resolution.
   */
  written(batch: UsageBatch): void {
    const now = this.now();
    for (const [l, m] of [
      [this.#bindings, batch.bindings],
      [this.#identities, batch.identities],
    ] as const) {
      for (const [uid, at] of l.written) if (now - at >= this.resolutionMs) l.written.delete(uid);
      for (const [uid, at] of m) if ((l.written.get(uid) ?? -Infinity) < at) l.written.set(uid, at);
    }
  }

  /** Put back a batch that could not be written (a later use of the same uid wins). */
  restore(batch: UsageBatch): void {
    for (const [uid, at] of batch.bindings) this.#note(this.#bindings, uid, at);
    for (const [uid, at] of batch.identities) this.#note(this.#identities, uid, at);
  }
}
