import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { API_GROUP_VERSION, type ArborObject, type KindName } from './resources.js';

export type EventType = 'Normal' | 'Warning';

/** Where Events about our objects go. */
export interface EventSink {
  emit(kind: KindName, obj: ArborObject, type: EventType, reason: string, message: string): void;
}

const COMPONENT = 'arbor-reconciler';

/** How many distinct events are remembered for aggregation (client-go: 4096). */
const CACHE_SIZE = 4096;

interface Seen {
  name: string;
  count: number;
  at: number;
}

/**
 * Posts core/v1 Events about our objects (`kubectl describe` shows them). Like client-go's
 * recorder, a repeat of an event already posted (same object, type, reason and message)
 * bumps that Event's `count` and `lastTimestamp` instead of creating another object, so
 * an object that fails the same way all night leaves one Event, not hundreds. Best
 * effort: an Event that cannot be written is logged at debug and dropped, never retried,
 * so a flaky API server cannot turn into an Event storm or block reconciling.
 */
export class KubeEventSink implements EventSink {
  private readonly api: CoreV1Api;
  /** Insertion-ordered, so the oldest entry is evicted first (LRU on touch). */
  private readonly seen = new Map<string, Seen>();

  constructor(
    kc: KubeConfig,
    private readonly logger: Logger,
    private readonly instance: string,
    /** An Event not repeated for this long is started afresh (client-go: 10 min window). */
    private readonly windowMs = 10 * 60_000,
  ) {
    this.api = kc.makeApiClient(CoreV1Api);
  }

  emit(kind: KindName, obj: ArborObject, type: EventType, reason: string, message: string): void {
    void this.record(kind, obj, type, reason, message.slice(0, 1024)).catch((e: unknown) =>
      this.logger.debug(
        { err: e, kind, namespace: obj.metadata.namespace, name: obj.metadata.name, reason },
        'event dropped',
      ),
    );
  }

  private async record(
    kind: KindName,
    obj: ArborObject,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const now = new Date();
    const { namespace, name, uid, resourceVersion } = obj.metadata;
    const key = JSON.stringify([kind, namespace, name, uid, type, reason, message]);
    const prev = this.seen.get(key);
    this.seen.delete(key);
    if (prev && now.getTime() - prev.at < this.windowMs) {
      const next = { ...prev, count: prev.count + 1, at: now.getTime() };
      this.remember(key, next);
      try {
        await this.api.patchNamespacedEvent(
          { name: prev.name, namespace, body: { count: next.count, lastTimestamp: now } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return;
      } catch (e) {
        // Gone (Events expire after an hour) or never landed: post a new one below.
        this.seen.delete(key);
        this.logger.debug({ err: e, event: prev.name }, 'event update failed; posting anew');
      }
    }
    const body: CoreV1Event = {
      metadata: { generateName: `${name}.`, namespace },
      involvedObject: {
        apiVersion: API_GROUP_VERSION,
        kind,
        namespace,
        name,
        uid,
        resourceVersion,
      },
      type,
      reason,
      message,
      source: { component: COMPONENT },
      reportingComponent: COMPONENT,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    const created = await this.api.createNamespacedEvent({ namespace, body });
    const eventName = created.metadata?.name;
    if (eventName) this.remember(key, { name: eventName, count: 1, at: now.getTime() });
  }

  private remember(key: string, s: Seen): void {
    this.seen.set(key, s);
    if (this.seen.size > CACHE_SIZE) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}
