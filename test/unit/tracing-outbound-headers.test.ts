import { context, trace } from '@opentelemetry/api';
import test from 'ava';
import { registerTracing } from '../../src/tracing/tracing-sdk.js';
import {
  endServerSpan,
  setTracingOn,
  startServerSpan,
  withClientSpan,
  within,
} from '../../src/tracing/spans.js';

// What Arbor sends on when it calls out (an issuer's discovery and keys, an event sink) in a
// request that came with a caller's trace context: W3C trace context only. Baggage is the
// caller's to fill with anything; forwarding it would hand that to every issuer the STS
// fetches. The SDK as the server registers it (global propagator), at a 0 % ratio.
const { stop, unsampledRoot, trustParent } = registerTracing(
  { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  'test',
);
setTracingOn(true, unsampledRoot, trustParent);
test.after.always(() => stop());

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const caller = {
  traceparent: `00-${TRACE}-00f067aa0ba902b7-01`,
  tracestate: 'vendor=x',
  baggage: 'tenant=acme,secret=s3cr3t',
};

test('an outbound call carries traceparent, never the caller’s baggage', async (t) => {
  const s = startServerSpan('GET /x', caller, 'r1', () => ({}));
  const sent = await within(s, () =>
    withClientSpan(
      'GET',
      () => ({}),
      (propagate) => Promise.resolve({ ...propagate }),
    ),
  );
  endServerSpan(s, () => ({}), false);
  t.regex(sent.traceparent ?? '', new RegExp(`^00-${TRACE}-[0-9a-f]{16}-0[01]$`));
  t.false('baggage' in sent, JSON.stringify(sent));
  t.deepEqual(
    Object.keys(sent).filter((k) => k !== 'traceparent' && k !== 'tracestate'),
    [],
  );
});

test('a caller’s sampled flag does not force the request to be traced at 0 %', (t) => {
  const s = startServerSpan('GET /x', caller, 'r2', () => ({}));
  t.false(s!.span.isRecording());
  // It still joins the caller's trace: only the sampling decision is Arbor's.
  t.is(s!.span.spanContext().traceId, TRACE);
  t.is(trace.getSpan(context.active()), undefined);
  endServerSpan(s, () => ({}), false);
});
