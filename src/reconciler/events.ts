import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { API_GROUP_VERSION, type ArborObject, type KindName } from './resources.js';

export type EventType = 'Normal' | 'Warning';

/** Where Events about our objects go. */
export interface EventSink {
  emit(kind: KindName, obj: ArborObject, type: EventType, reason: string, message: string): void;
}

const COMPONENT = 'arbor-reconciler';

/**
 * Posts core/v1 Events about our objects (`kubectl describe` shows them). Best effort:
 * an Event that cannot be written is logged at debug and dropped, never retried, so a
 * flaky API server cannot turn into an Event storm or block reconciling.
 */
export class KubeEventSink implements EventSink {
  private readonly api: CoreV1Api;

  constructor(
    kc: KubeConfig,
    private readonly logger: Logger,
    private readonly instance: string,
  ) {
    this.api = kc.makeApiClient(CoreV1Api);
  }

  emit(kind: KindName, obj: ArborObject, type: EventType, reason: string, message: string): void {
    const now = new Date();
    const { namespace, name, uid, resourceVersion } = obj.metadata;
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
      message: message.slice(0, 1024),
      source: { component: COMPONENT },
      reportingComponent: COMPONENT,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    this.api.createNamespacedEvent({ namespace, body }).then(
      () => undefined,
      (e: unknown) => this.logger.debug({ err: e, kind, namespace, name, reason }, 'event dropped'),
    );
  }
}
