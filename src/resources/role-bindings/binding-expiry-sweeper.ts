import type { Authorizer } from '../../auth/authorizer.js';
import { systemPrincipal } from '../../auth/principal.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { UnitOfWork } from '../tx.js';
import type { RoleBindingStore } from './role-binding-store.js';
import { revokeBindings } from './revoke-bindings.js';

export interface BindingExpirySweeperDeps {
  uow: UnitOfWork;
  bindings: RoleBindingStore;
  authz: Authorizer;
  audit: ChangeRecorder;
  /** How long an expired binding stays listed (as expired) before it is deleted. */
  retentionMs: number;
  /** How often to look. */
  intervalMs: number;
  now?: () => number;
  /** Other timed work done on the same beat (closing timed-out access requests). */
  alsoSweep?: () => Promise<unknown>;
  log?: { warn(o: object, msg: string): void };
}

/**
 * Who the audit trail names for a sweep: Arbor itself, through no door (without a `via`,
 * a system principal would be recorded as the reconciler, which it is not).
 */
const SWEEPER = systemPrincipal('binding-expiry', { door: 'system' });
const BATCH = 100;

/**
 * Deletes role bindings that expired more than the retention period ago, in batches, each
 * deletion audited and evented (`revokeBindings`, cause `EXPIRED`) in the deleting
 * transaction, so no deletion goes unrecorded. The binding stopped granting at its expiry already; this only
 * tidies. Replicas may all sweep: each locks its batch and skips the others'.
 */
export class BindingExpirySweeper {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;

  constructor(private readonly d: BindingExpirySweeperDeps) {}

  /** Sweep until nothing is left to delete; answers how many bindings were deleted. */
  async sweep(): Promise<number> {
    const cutoff = new Date((this.d.now ?? Date.now)() - this.d.retentionMs);
    let total = 0;
    for (;;) {
      const n = await this.d.uow.run(async (tx) => {
        const expired = await this.d.bindings.expiredBefore(tx, cutoff, BATCH);
        await revokeBindings(tx, this.d, SWEEPER, expired, { reason: 'EXPIRED' });
        return expired.length;
      });
      total += n;
      if (n < BATCH) break;
    }
    if (total > 0) this.d.authz.grantsChanged();
    await this.d.alsoSweep?.();
    return total;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.sweep()
        .catch((err: unknown) => this.d.log?.warn({ err }, 'binding expiry sweep failed'))
        .finally(() => (this.#running = undefined));
    }, this.d.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
