import { ROOT_CONTEXT, SpanKind, TraceFlags, type Attributes } from '@opentelemetry/api';
import { SamplingDecision, type Sampler } from '@opentelemetry/sdk-trace-node';
import type { PooledIdGenerator } from './pooled-id-generator.js';
import type { UnsampledRoot } from './spans.js';

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/**
 * The provider's own `sampler`, asked about the trace id its `ids` would hand out next: a
 * root it would drop is dropped here, before any span or context is made (its ids are
 * drawn and returned); one it would keep is left to the provider, which draws that same id
 * and takes the same decision. That holds for every sampler the variables can name
 * (sampler-from-env.ts): each decides a root on its trace id alone.
 */
export function unsampledRootOf(sampler: Sampler, ids: PooledIdGenerator): UnsampledRoot {
  return (name) => {
    const traceId = ids.peekTraceId();
    const { decision } = sampler.shouldSample(
      ROOT_CONTEXT,
      traceId,
      name,
      SpanKind.SERVER,
      NO_ATTRIBUTES,
      [],
    );
    if (decision !== SamplingDecision.NOT_RECORD) return undefined;
    ids.generateTraceId();
    return { traceId, spanId: ids.generateSpanId(), traceFlags: TraceFlags.NONE };
  };
}
