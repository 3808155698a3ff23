import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { PooledIdGenerator } from './pooled-id-generator.js';
import { samplerFromEnv } from './sampler-from-env.js';
import type { UnsampledRoot } from './spans.js';
import { unsampledRootOf } from './unsampled-root.js';
import { WorkerSpanExporter } from './worker-span-exporter.js';

/**
 * The OpenTelemetry SDK, registered process-wide: a Node tracer provider (AsyncLocalStorage
 * context; W3C trace context propagation only, no baggage, which a caller could fill with
 * anything for Arbor to forward to every issuer and sink it calls), the sampler from
 * OTEL_TRACES_SAMPLER and its argument (sampler-from-env.ts; default parentbased_always_on,
 * a caller's sampled flag obeyed only with ARBOR_TRACE_TRUST_PARENT=true), batched OTLP/HTTP
 * (protobuf) export to OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, sent from a worker thread
 * (worker-span-exporter.ts), and the resource from OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES (service.name `arbor` unless they name another). Ids come from
 * PooledIdGenerator: every request, sampled or not, draws a trace id and a span id. What it
 * returns beside `stop` is the doors' early decision on new roots (unsampled-root.ts).
 * Imported only by start-tracing.ts, and only when tracing is on.
 */
export function registerTracing(
  env: NodeJS.ProcessEnv,
  version: string,
): {
  stop: () => Promise<void>;
  unsampledRoot: UnsampledRoot | undefined;
  trustParent: boolean;
} {
  const { sampler, rootRatio, trustParent } = samplerFromEnv(env);
  const ids = new PooledIdGenerator();
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim());
  const spanProcessors: SpanProcessor[] = [];
  if (exporters.includes('otlp'))
    spanProcessors.push(new BatchSpanProcessor(new WorkerSpanExporter(env)));
  if (exporters.includes('console'))
    spanProcessors.push(new BatchSpanProcessor(new ConsoleSpanExporter()));
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'arbor',
    [ATTR_SERVICE_VERSION]: version,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors,
    idGenerator: ids,
    sampler,
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    stop: () => provider.shutdown(),
    unsampledRoot: unsampledRootOf(rootRatio, ids),
    trustParent,
  };
}
