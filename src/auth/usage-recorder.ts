/** The latest use of each binding and identity since the last drain, by uid (epoch ms). */
export interface UsageBatch {
  bindings: ReadonlyMap<string, number>;
  identities: ReadonlyMap<string, number>;
}

/**
 * Last used, kept cheaply: a decision that a role binding grants, or an identity's
 * authentication, only sets the latest instant in a map in memory (no I/O, nothing
 * awaited on the request path). A background flush (`UsageFlusher`) drains the maps and
 * writes them in one batched statement every few seconds, so a crash loses at most that
 * interval of last-used times, and never a grant (nothing here decides access).
 *
 * Bounded by what exists: a binding uid comes from the grant source and an identity uid
 * from a verified credential, never from request input, so between two flushes the maps
 * hold at most one entry per binding and identity in use.
 */
export class UsageRecorder {
  readonly stats = { recorded: 0 };
  #bindings = new Map<string, number>();
  #identities = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A role binding granted (part of) a decision now. */
  bindingUsed(uid: string, at = this.now()): void {
    this.#note(this.#bindings, uid, at);
  }

  /**
   * The bindings of a decision's grants granted it now (one clock read for them all, and no
   * array made: this runs on every allowed check, even one answered from memory).
   */
  grantsUsed(grants: ReadonlyArray<{ readonly bindingUid: string }>): void {
    const at = this.now();
    for (let i = 0; i < grants.length; i++) this.#note(this.#bindings, grants[i]!.bindingUid, at);
  }

  /** An identity authenticated now (STS exchange, API token, registry credentials). */
  identityUsed(uid: string, at = this.now()): void {
    this.#note(this.#identities, uid, at);
  }

  #note(m: Map<string, number>, uid: string, at: number): void {
    const had = m.get(uid);
    if (had !== undefined && had >= at) return;
    m.set(uid, at);
    this.stats.recorded++;
  }

  /** Whether anything waits to be written. */
  get pending(): boolean {
    return this.#bindings.size > 0 || this.#identities.size > 0;
  }

  /** Take everything recorded so far, leaving the maps empty. */
  drain(): UsageBatch {
    const batch = { bindings: this.#bindings, identities: this.#identities };
    this.#bindings = new Map();
    this.#identities = new Map();
    return batch;
  }

  /** Put back a batch that could not be written (a later use of the same uid wins). */
  restore(batch: UsageBatch): void {
    for (const [uid, at] of batch.bindings) this.#note(this.#bindings, uid, at);
    for (const [uid, at] of batch.identities) this.#note(this.#identities, uid, at);
  }
}
