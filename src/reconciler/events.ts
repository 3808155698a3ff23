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

/** The two Event calls the sink makes: a CoreV1Api, or a fake of it in a unit test. */
export type EventWriter = Pick<CoreV1Api, 'createNamespacedEvent' | 'patchNamespacedEvent'>;

/**
 * Posts core/v1 Events about our objects (`kubectl describe` shows them). Like client-go's
 * recorder, a repeat of an event already posted (same object, type, reason and message)
 * bumps that Event's `count` and `lastTimestamp` instead of creating another object, so
 * an object that fails the same way all night leaves one Event, not hundreds. Best
 * effort: an Event that cannot be written is logged at debug and dropped, never retried,
 * so a flaky API server cannot turn into an Event storm or block reconciling.
 *
 * Writes for one key are serialised: a repeat emitted while the first Event's create is
 * still in flight waits for it, then patches the Event it made. Without that, the repeat
 * found nothing remembered yet and posted a second Event (a real race). The
 * order is per process only: two sinks, in two replicas during a leader hand-over, may
 * still each post one Event for the same occurrence, as client-go's recorders do.
 */
export class KubeEventSink implements EventSink {
  private readonly api: EventWriter;
  /** Insertion-ordered, so the oldest entry is evicted first (LRU on touch). */
  private readonly seen = new Map<string, Seen>();
  /** The last write queued for a key, while one is in flight: the next one chains on it. */
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    cluster: KubeConfig | EventWriter,
    private readonly logger: Logger,
    private readonly instance: string,
    /** An Event not repeated for this long is started afresh (client-go: 10 min window). */
    private readonly windowMs = 10 * 60_000,
  ) {
    this.api = 'makeApiClient' in cluster ? cluster.makeApiClient(CoreV1Api) : cluster;
  }

  emit(kind: KindName, obj: ArborObject, type: EventType, reason: string, message: string): void {
    const { namespace, name, uid } = obj.metadata;
    const text = message.slice(0, 1024);
    const key = JSON.stringify([kind, namespace, name, uid, type, reason, text]);
    const now = new Date();
    const write = (): Promise<void> =>
      this.record(key, kind, obj, type, reason, text, now).catch((e: unknown) =>
        this.logger.debug({ err: e, kind, namespace, name, reason }, 'event dropped'),
      );
    // record() never rejects past its catch, so the chain cannot break on a failed write.
    const tail = (this.tails.get(key) ?? Promise.resolve()).then(write);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
  }

  /** Resolves once every write queued so far has been made or dropped (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values());
  }

  private async record(
    key: string,
    kind: KindName,
    obj: ArborObject,
    type: EventType,
    reason: string,
    message: string,
    now: Date,
  ): Promise<void> {
    const { namespace, name, uid, resourceVersion } = obj.metadata;
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
