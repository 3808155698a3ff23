import { ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { NodeTracerProvider, SamplingDecision } from '@opentelemetry/sdk-trace-node';
import test from 'ava';
import { PooledIdGenerator } from '../../src/tracing/pooled-id-generator.js';
import { samplerFromEnv } from '../../src/tracing/sampler-from-env.js';
import { unsampledRootOf } from '../../src/tracing/unsampled-root.js';

// Which requests are traced, and with which ids: the sampler from the standard variables,
// the doors' early decision on new roots, and the id pools both draw from.

test('the sampler variables: the SDK names, a ratio from 0 to 1, anything else refused', (t) => {
  const at = (v: Record<string, string>) =>
    samplerFromEnv(v).sampler.shouldSample(
      ROOT_CONTEXT,
      '0'.repeat(31) + '1',
      'x',
      SpanKind.SERVER,
      {},
      [],
    ).decision;
  t.is(at({}), SamplingDecision.RECORD_AND_SAMPLED, 'default parentbased_always_on');
  t.is(at({ OTEL_TRACES_SAMPLER: 'always_off' }), SamplingDecision.NOT_RECORD);
  t.is(
    at({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }),
    SamplingDecision.NOT_RECORD,
  );
  t.is(at({ OTEL_TRACES_SAMPLER: 'traceidratio' }), SamplingDecision.RECORD_AND_SAMPLED);
  t.throws(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }), {
    message: /OTEL_TRACES_SAMPLER=jaeger_remote is not supported/,
  });
  t.throws(
    () => samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '10%' }),
    { message: /OTEL_TRACES_SAMPLER_ARG=10% is not a ratio from 0 to 1/ },
  );
});

test('a lean root decides as the SDK would: the ids it drops are the ones the SDK drops', (t) => {
  const configs: Array<Record<string, string>> = [
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.999' },
    { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
    { OTEL_TRACES_SAMPLER: 'parentbased_always_off' },
    { OTEL_TRACES_SAMPLER: 'always_off' },
  ];
  for (const env of configs) {
    const { sampler, rootRatio } = samplerFromEnv(env);
    const ids = new PooledIdGenerator();
    // A provider of its own (not registered): its tracer draws from the same ids.
    const tracer = new NodeTracerProvider({ idGenerator: ids, sampler }).getTracer('lean-test');
    const decide = unsampledRootOf(rootRatio, ids)!;
    let dropped = 0;
    for (let i = 0; i < 3000; i++) {
      const next = ids.peekTraceId();
      const sdk = sampler.shouldSample(ROOT_CONTEXT, next, 'GET /x', SpanKind.SERVER, {}, []);
      const lean = decide();
      if (lean !== undefined) {
        dropped++;
        t.is(sdk.decision, SamplingDecision.NOT_RECORD, `${JSON.stringify(env)}: ${next}`);
        t.is(lean.traceId, next);
        t.is(lean.traceFlags, 0);
        t.regex(lean.spanId, /^[0-9a-f]{16}$/);
        t.not(ids.peekTraceId(), next, 'a dropped root takes its id');
      } else {
        t.is(sdk.decision, SamplingDecision.RECORD_AND_SAMPLED, `${JSON.stringify(env)}: ${next}`);
        const span = tracer.startSpan('GET /x', { kind: SpanKind.SERVER }, ROOT_CONTEXT);
        t.is(span.spanContext().traceId, next, 'the SDK draws the id the decision was taken on');
        t.true(span.isRecording());
        span.end();
      }
    }
    const share = 1 - dropped / 3000;
    t.true(Math.abs(share - rootRatio) < 0.04, `${JSON.stringify(env)}: ${share} kept`);
  }
  // Every root kept: nothing to decide early.
  t.is(unsampledRootOf(samplerFromEnv({}).rootRatio, new PooledIdGenerator()), undefined);
  t.is(
    unsampledRootOf(
      samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_on' }).rootRatio,
      new PooledIdGenerator(),
    ),
    undefined,
  );
});

test('pooled ids: W3C-valid, lowercase hex, never repeated in a run', (t) => {
  const g = new PooledIdGenerator();
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    // Taken for a dropped root too: its ids are as valid, and never handed out again.
    const root = g.takeUnsampledRoot();
    for (const id of [g.generateTraceId(), root.traceId]) {
      t.regex(id, /^[0-9a-f]{32}$/);
      t.false(seen.has(id));
      seen.add(id);
    }
    t.regex(g.generateSpanId(), /^[0-9a-f]{16}$/);
    t.regex(root.spanId, /^[0-9a-f]{16}$/);
  }
});

/** A context whose parent is a caller's `traceparent`: remote, with the flag it sent. */
const remote = (traceId: string, sampled: boolean) =>
  trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: '00f067aa0ba902b7',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });

test('a caller’s sampled flag forces nothing at a 0 % ratio unless callers are trusted', (t) => {
  const zero = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' };
  const decide = (env: Record<string, string>, ctx = remote('1'.repeat(32), true)) =>
    samplerFromEnv(env).sampler.shouldSample(ctx, '1'.repeat(32), 'x', SpanKind.SERVER, {}, [])
      .decision;
  t.is(decide(zero), SamplingDecision.NOT_RECORD, 'by default the flag decides nothing');
  t.false(samplerFromEnv(zero).trustParent);
  t.is(
    decide({ ...zero, ARBOR_TRACE_TRUST_PARENT: 'true' }),
    SamplingDecision.RECORD_AND_SAMPLED,
    'trusted callers: the flag decides, as the standard parent-based sampler',
  );
  t.true(samplerFromEnv({ ...zero, ARBOR_TRACE_TRUST_PARENT: 'true' }).trustParent);
  // Local parents (spans of this process) are obeyed as ever.
  const local = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '1'.repeat(32),
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
  });
  t.is(decide(zero, local), SamplingDecision.RECORD_AND_SAMPLED);
  // Always on stays always on.
  t.is(decide({}), SamplingDecision.RECORD_AND_SAMPLED);
  t.throws(() => samplerFromEnv({ ARBOR_TRACE_TRUST_PARENT: 'yes' }), {
    message: /ARBOR_TRACE_TRUST_PARENT=yes is not true or false/,
  });
});

test('a caller cannot pick a trace id that passes the ratio: remote parents draw afresh', (t) => {
  // An id whose words XOR to 0 passes any ratio's trace-id test; the SDK would keep it
  // every time. Untrusted, a remote parent is kept at about the ratio, whatever its id.
  const chosen = '00000000000000000000000000000001';
  const { sampler } = samplerFromEnv({
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
  });
  let kept = 0;
  for (let i = 0; i < 2000; i++)
    if (
      sampler.shouldSample(remote(chosen, true), chosen, 'x', SpanKind.SERVER, {}, []).decision ===
      SamplingDecision.RECORD_AND_SAMPLED
    )
      kept++;
  t.true(kept > 100 && kept < 320, `${kept} of 2000 kept`);
});
