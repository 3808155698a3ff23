import {
  CoordinationV1Api,
  V1MicroTime,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { isKubeNotFound, kubeStatus } from './kube-api.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  /** This replica's name (the pod name in a cluster). */
  identity: string;
  /** How long a lease is honoured without renewal (client-go default 15 s). */
  leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down (10 s). */
  renewDeadlineMs?: number;
  /** How often to try to acquire or renew (2 s). */
  retryPeriodMs?: number;
  logger: Logger;
}

export interface LeaderCallbacks {
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

/**
 * Leader election on a coordination.k8s.io Lease, after client-go's leaderelection:
 * optimistic concurrency on the Lease's resourceVersion decides races, and expiry is
 * judged by our own clock from when we last saw the record change, never by comparing
 * the holder's renewTime with our clock (replicas' clocks may disagree).
 * Requires LeaseDuration > RenewDeadline > RetryPeriod.
 */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly leaseMs: number;
  private readonly renewMs: number;
  private readonly retryMs: number;
  private leading = false;
  private stopped = true;
  private lastRenew = 0;
  private observed: { version: string; at: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();

  constructor(
    kc: KubeConfig,
    private readonly o: LeaderElectionOptions,
    private readonly cb: LeaderCallbacks,
  ) {
    this.api = kc.makeApiClient(CoordinationV1Api);
    this.leaseMs = o.leaseDurationMs ?? 15_000;
    this.renewMs = o.renewDeadlineMs ?? 10_000;
    this.retryMs = o.retryPeriodMs ?? 2_000;
    if (!(this.leaseMs > this.renewMs && this.renewMs > this.retryMs)) {
      throw new Error('leader election needs leaseDuration > renewDeadline > retryPeriod');
    }
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stop campaigning; a leader releases the Lease so a successor need not wait it out. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
    if (this.leading) {
      this.leading = false;
      this.cb.onStoppedLeading();
      await this.release().catch((e: unknown) =>
        this.o.logger.warn({ err: e }, 'could not release the leader lease'),
      );
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ticking = this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    const ok = await this.tryAcquireOrRenew().catch((e: unknown) => {
      this.o.logger.warn({ err: e instanceof Error ? e.message : e }, 'leader lease update failed');
      return false;
    });
    if (this.stopped) return;
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.o.logger.info({ identity: this.o.identity, lease: this.o.name }, 'became leader');
        this.cb.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew > this.renewMs) {
      this.leading = false;
      this.o.logger.warn({ identity: this.o.identity }, 'lost the leader lease; stepping down');
      this.cb.onStoppedLeading();
    }
    // Followers poll a little slower than the leader renews (client-go's jitter of 1.2).
    this.schedule(
      this.leading ? this.retryMs : Math.round(this.retryMs * (1 + Math.random() * 0.2)),
    );
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.o;
    const now = new V1MicroTime(Date.now());
    const seconds = Math.ceil(this.leaseMs / 1000);
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (e) {
      if (!isKubeNotFound(e)) throw e;
      const body: V1Lease = {
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: seconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        },
      };
      return this.conflictIsFalse(this.api.createNamespacedLease({ namespace, body }));
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const version = lease.metadata?.resourceVersion ?? '';
    if (this.observed?.version !== version) this.observed = { version, at: Date.now() };
    const heldMs = (spec.leaseDurationSeconds ?? seconds) * 1000;
    if (holder !== '' && holder !== identity && this.observed.at + heldMs > Date.now()) {
      return false;
    }
    lease.spec = {
      holderIdentity: identity,
      leaseDurationSeconds: seconds,
      acquireTime: holder === identity && spec.acquireTime ? spec.acquireTime : now,
      renewTime: now,
      leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1),
    };
    return this.conflictIsFalse(this.api.replaceNamespacedLease({ name, namespace, body: lease }));
  }

  /** Someone else wrote the Lease between our read and write: they won this round. */
  private async conflictIsFalse(p: Promise<unknown>): Promise<boolean> {
    try {
      await p;
      return true;
    } catch (e) {
      if (kubeStatus(e) === 409) return false;
      throw e;
    }
  }

  private async release(): Promise<void> {
    const { namespace, name, identity } = this.o;
    const lease = await this.api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 };
    await this.api.replaceNamespacedLease({ name, namespace, body: lease });
  }
}
