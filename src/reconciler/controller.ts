import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Services } from '../services.js';
import { NamespaceAuthorities } from './authority.js';
import { KubeEventSink, type EventSink } from './events.js';
import { FINALIZER, isDeleting } from './finalizer.js';
import { GroupReconciler } from './group-reconciler.js';
import { KindInformer, type WatchVerb } from './informers.js';
import { WaitingForReference, type KindReconciler, type RefResolver } from './kind-sync.js';
import { ArborKubeApi } from './kube-api.js';
import { NamespaceModes } from './observe-mode.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import { reconcileSpan } from './reconcile-span.js';
import { ReconcileStats, ResourceReconciler } from './resource-reconciler.js';
import { objectKey, parseKey, type ArborObject, type KindName } from './resources.js';
import { WorkQueue, type WorkQueueOptions } from './work-queue.js';
import { IdentityReconciler } from './identity-reconciler.js';
import { RoleBindingReconciler } from './rolebinding-reconciler.js';

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  services: Services;
  logger: Logger;
  /** Watch one namespace; undefined watches all of them. */
  namespace?: string;
  /** Lease-based leader election; `false` runs as the only replica (tests, one-off runs). */
  leaderElection: Omit<LeaderElectionOptions, 'logger'> | false;
  /** Full relist and requeue of every object (default 10 min). */
  resyncMs?: number;
  queue?: Omit<WorkQueueOptions, 'process' | 'onError' | 'clock'>;
  events?: EventSink;
  /**
   * Namespaces whose objects act as the Arbor administrator (`ARBOR_RECONCILER_ADMIN_NAMESPACES`);
   * every other namespace acts as the identity its NamespaceAuthority names, or not at all.
   */
  adminNamespaces?: readonly string[];
  /** The cluster's service-account issuer (default: read from the apiserver). */
  clusterIssuer?: () => Promise<string>;
}

/**
 * Wires the front door: informers → work queue → per-kind reconcilers, with a periodic
 * resync, behind a leader lease. Only the leader runs informers and the queue; the
 * others just campaign, so two replicas never reconcile the same object at once.
 */
export class Controller {
  readonly stats = new ReconcileStats();
  private readonly kube: ArborKubeApi;
  private readonly queue: WorkQueue;
  private readonly informers = new Map<KindName, KindInformer>();
  private readonly reconcilers = new Map<KindName, ResourceReconciler<object>>();
  private readonly kinds: Array<KindReconciler<object>> = [];
  /** What we last saw of each object, to skip status-only updates (our own writes). */
  private readonly seen = new Map<string, { print: string; uid: string | null }>();
  private readonly elector: LeaderElector | undefined;
  readonly authorities: NamespaceAuthorities;
  private resyncTimer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly o: ControllerOptions) {
    const { kubeConfig: kc, logger } = o;
    this.kube = new ArborKubeApi(kc);
    this.queue = new WorkQueue({
      ...o.queue,
      process: (key) => this.process(key),
      onError: (key, err) => logger.warn({ key, err }, 'reconcile threw; retrying with backoff'),
    });
    const events =
      o.events ??
      new KubeEventSink(kc, logger, o.leaderElection ? o.leaderElection.identity : 'arbor');
    this.authorities = new NamespaceAuthorities({
      kubeConfig: kc,
      kube: this.kube,
      identities: o.services.identities,
      logger,
      adminNamespaces: o.adminNamespaces,
      issuer: o.clusterIssuer,
      onChange: (namespaces) => this.wakeNamespaces(namespaces),
    });
    this.kinds.push(new GroupReconciler(o.services.groups) as KindReconciler<object>);
    this.kinds.push(new IdentityReconciler(o.services.identities) as KindReconciler<object>);
    this.kinds.push(
      new RoleBindingReconciler(
        o.services.roleBindings,
        o.services.roles,
        undefined,
        o.services.accessSimulator,
      ) as KindReconciler<object>,
    );
    const modes = new NamespaceModes(kc);
    const refs: RefResolver = {
      uidOf: (k, ns, n) => this.uidOf(k, ns, n),
      peek: (k, ns, n) => this.informers.get(k)?.get(ns, n)?.status?.uid,
    };
    for (const kind of this.kinds) {
      this.reconcilers.set(
        kind.kind,
        new ResourceReconciler(kind, {
          kube: this.kube,
          events,
          logger,
          refs,
          authority: this.authorities,
          managed: o.services.managed,
          stats: this.stats,
          modes,
        }),
      );
      this.informers.set(
        kind.kind,
        new KindInformer(kc, this.kube, {
          kind: kind.kind,
          namespace: o.namespace,
          logger,
          onEvent: (verb, obj) => this.onEvent(kind.kind, verb, obj),
        }),
      );
    }
    this.elector = o.leaderElection
      ? new LeaderElector(
          kc,
          { ...o.leaderElection, logger },
          {
            onStartedLeading: () => void this.run(),
            onStoppedLeading: () => void this.halt(),
          },
        )
      : undefined;
  }

  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader : this.running;
  }

  /** True once every informer has completed its first list. */
  get synced(): boolean {
    return this.authorities.synced && [...this.informers.values()].every((i) => i.synced);
  }

  start(): void {
    if (this.elector) this.elector.start();
    else void this.run();
  }

  async stop(): Promise<void> {
    if (this.elector) await this.elector.stop();
    await this.halt();
  }

  /** Requeue every object now, from a fresh list (not the informer cache). */
  async resyncNow(): Promise<void> {
    for (const kind of this.kinds) {
      const { items } = await this.kube.list(kind.kind, this.o.namespace);
      for (const obj of items)
        this.queue.add(objectKey(kind.kind, obj.metadata.namespace, obj.metadata.name));
    }
  }

  /**
   * Start and stop are chained: leadership can be lost and won again while informers
   * are still shutting down, and the two must not interleave.
   */
  private lifecycle: Promise<void> = Promise.resolve();

  private run(): Promise<void> {
    this.lifecycle = this.lifecycle.then(() => {
      if (this.running) return;
      this.running = true;
      this.seen.clear();
      this.authorities.start();
      for (const i of this.informers.values()) i.start();
      this.queue.start();
      // A restarted informer does not replay the objects it already holds, so a replica
      // that leads again would otherwise wait for the next resync to look at them.
      this.resync();
      const every = this.o.resyncMs ?? 600_000;
      this.resyncTimer = setInterval(() => this.resync(), every);
      this.resyncTimer.unref();
    });
    return this.lifecycle;
  }

  private halt(): Promise<void> {
    this.lifecycle = this.lifecycle.then(async () => {
      if (!this.running) return;
      this.running = false;
      clearInterval(this.resyncTimer);
      await Promise.all([
        this.authorities.stop(),
        ...[...this.informers.values()].map((i) => i.stop()),
      ]);
      await this.queue.stop();
    });
    return this.lifecycle;
  }

  private resync(): void {
    this.resyncNow().catch((e: unknown) => this.o.logger.warn({ err: e }, 'resync failed'));
  }

  private async process(key: string) {
    const { kind, namespace, name } = parseKey(key);
    const r = this.reconcilers.get(kind);
    if (!r) throw new Error(`no reconciler for ${kind}`);
    return reconcileSpan(kind, namespace, name, () => r.reconcile(namespace, name));
  }

  private uidOf(kind: KindName, namespace: string, name: string): string {
    const obj = this.informers.get(kind)?.get(namespace, name);
    if (!obj)
      throw new WaitingForReference(`${kind} "${name}" does not exist in namespace "${namespace}"`);
    const uid = obj.status?.uid;
    if (!uid) throw new WaitingForReference(`${kind} "${name}" has no Arbor uid yet`);
    return uid;
  }

  /**
   * Enqueue on changes that matter: spec (generation), deletion, finalizers, labels and
   * annotations, and the uid — which also wakes every object that references this one,
   * so a folder applied before its org converges as soon as the org has a uid.
   */
  private onEvent(kind: KindName, verb: WatchVerb, obj: ArborObject): void {
    const { namespace, name } = obj.metadata;
    const key = objectKey(kind, namespace, name);
    const before = this.seen.get(key);
    if (verb === 'delete') {
      this.seen.delete(key);
      this.queue.forget(key);
      this.wakeDependents(kind, namespace, name);
      return;
    }
    const m = obj.metadata;
    const uid = obj.status?.uid ?? null;
    // What the controller writes itself (its finalizer, status.uid) does not requeue the
    // object: that would reconcile every new object twice. A uid that appears still wakes
    // the objects waiting on it; a finalizer removed by hand is restored at the next resync.
    const print = JSON.stringify([
      m.generation,
      m.deletionTimestamp ?? null,
      (m.finalizers ?? []).filter((f) => f !== FINALIZER),
      m.labels ?? {},
      m.annotations ?? {},
    ]);
    const uidChanged = before?.uid !== uid;
    this.seen.set(key, { print, uid });
    if (before?.print !== print) this.queue.add(key);
    if (uidChanged || isDeleting(obj)) this.wakeDependents(kind, namespace, name);
  }

  /** A namespace's authority changed: every object in it must be looked at again. */
  private wakeNamespaces(namespaces: readonly string[]): void {
    for (const ns of namespaces) {
      if (this.o.namespace !== undefined && ns !== this.o.namespace) continue;
      for (const [kind, informer] of this.informers) {
        for (const obj of informer.list(ns)) this.queue.add(objectKey(kind, ns, obj.metadata.name));
      }
    }
  }

  private wakeDependents(kind: KindName, namespace: string, name: string): void {
    for (const k of this.kinds) {
      for (const other of this.informers.get(k.kind)?.list(namespace) ?? []) {
        const refs = k.references((other as ArborObject<object>).spec ?? {});
        if (refs.some((r) => r.kind === kind && r.name === name)) {
          this.queue.add(objectKey(k.kind, namespace, other.metadata.name));
        }
      }
    }
  }
}
