import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ArborKubeApi } from './kube-api.js';
import { API_GROUP, API_VERSION, KINDS, type ArborObject, type KindName } from './resources.js';

export type WatchVerb = 'add' | 'update' | 'delete';

export interface KindInformerOptions<T extends KubernetesObject = ArborObject> {
  kind: KindName | 'NamespaceAuthority';
  /** Watch one namespace, or every namespace when undefined. */
  namespace: string | undefined;
  /** What to watch and list instead of the kind's namespaced collection. */
  source?: {
    path: string;
    list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>;
  };
  onEvent: (verb: WatchVerb, obj: T) => void;
  logger: Logger;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * A client-node informer for one kind that does not stay dead. In client-node 1.4 the
 * informer re-lists by itself only on 410 Gone; any other watch or list error fires
 * `error` and stops it for good. We restart it with capped exponential backoff (1 s →
 * 30 s); a run that lasted a minute counts as healthy and resets the backoff. The cache
 * is kept across restarts, and since a restarted informer does not replay objects it
 * already holds, the controller's periodic resync is what covers anything missed.
 */
export class KindInformer<T extends KubernetesObject = ArborObject> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private stopped = true;
  private failures = 0;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** True once the first list has arrived: before that, "missing" means "not known yet". */
  synced = false;

  constructor(
    kc: KubeConfig,
    kube: ArborKubeApi,
    private readonly o: KindInformerOptions<T>,
  ) {
    this.minBackoffMs = o.minBackoffMs ?? 1_000;
    this.maxBackoffMs = o.maxBackoffMs ?? 30_000;
    const { kind, namespace } = o;
    const source = o.source ?? {
      path:
        namespace === undefined
          ? `/apis/${API_GROUP}/${API_VERSION}/${KINDS[kind as KindName].plural}`
          : `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/${KINDS[kind as KindName].plural}`,
      list: () =>
        kube.list(kind as KindName, namespace) as unknown as Promise<{
          items: T[];
          metadata?: { resourceVersion?: string };
        }>,
    };
    this.informer = makeInformer<T>(kc, source.path, async () => {
      const list = await source.list();
      this.synced = true;
      return list;
    });
    this.informer.on('add', (obj) => o.onEvent('add', obj));
    this.informer.on('update', (obj) => o.onEvent('update', obj));
    this.informer.on('delete', (obj) => o.onEvent('delete', obj));
    this.informer.on('error', (err) => this.onError(err));
  }

  start(): void {
    this.stopped = false;
    this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.informer.stop();
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  private run(): void {
    this.startedAt = Date.now();
    this.informer.start().catch((e: unknown) => this.onError(e));
  }

  private onError(err: unknown): void {
    // stop() aborts the watch request, which surfaces here as an AbortError.
    if (this.stopped) return;
    if (this.timer) return; // already scheduled
    this.failures = Date.now() - this.startedAt > 60_000 ? 1 : this.failures + 1;
    const delay = Math.min(this.maxBackoffMs, this.minBackoffMs * 2 ** (this.failures - 1));
    this.o.logger.warn(
      {
        kind: this.o.kind,
        err: err instanceof Error ? err.message : String(err),
        retryInMs: delay,
      },
      'watch failed; restarting',
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) this.run();
    }, delay);
  }
}
