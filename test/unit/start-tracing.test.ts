import test from 'ava';
import { tracingOn } from '../../src/tracing/spans.js';
import { startTracing, tracingWanted } from '../../src/tracing/start-tracing.js';

test('tracing: off unless OTEL_TRACES_EXPORTER names an exporter', (t) => {
  t.false(tracingWanted({}));
  t.false(tracingWanted({ OTEL_TRACES_EXPORTER: '' }));
  t.false(tracingWanted({ OTEL_TRACES_EXPORTER: 'none' }));
  t.true(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' }));
  t.true(tracingWanted({ OTEL_TRACES_EXPORTER: ' otlp , console ' }));
  t.false(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'TRUE' }));
});

test('tracing: an exporter Arbor does not ship is refused by name', (t) => {
  t.throws(() => tracingWanted({ OTEL_TRACES_EXPORTER: 'zipkin' }), {
    message: /OTEL_TRACES_EXPORTER=zipkin is not supported/,
  });
});

test('tracing: off, starting does nothing and turns nothing on', async (t) => {
  t.is(await startTracing('0.0.0', {}), undefined);
  t.false(tracingOn());
});
