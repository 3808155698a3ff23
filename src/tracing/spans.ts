import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  createContextKey,
  isSpanContextValid,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';

/**
 * Whether tracing was started in this process (start-tracing.ts). Every hook below asks this
 * first and does nothing else when it is off, so a process without tracing allocates no
 * span, reads no context and never loads the SDK. The OpenTelemetry API is itself one
 * process-wide registry, so this flag is too (the one module-level state, and why).
 */
const state: {
  on: boolean;
  tracer: Tracer | undefined;
  unsampledRoot: UnsampledRoot | undefined;
  /** Whether callers' trace context is trusted (ARBOR_TRACE_TRUST_PARENT; sampler-from-env). */
  trustParent: boolean;
} = { on: false, tracer: undefined, unsampledRoot: undefined, trustParent: false };

/**
 * The ids of a new root span that the SDK's sampler drops, decided as the SDK would decide
 * it (unsampled-root.ts), or undefined when the sampler keeps it (the SDK then makes it).
 */
export type UnsampledRoot = () => SpanContext | undefined;

/** True once `startTracing` has registered the SDK. */
export function tracingOn(): boolean {
  return state.on;
}

/**
 * Called by start-tracing.ts only, once its provider is registered; tests turn it off. The
 * tracer is looked up once here: the API's lookup builds a key and walks two providers.
 */
export function setTracingOn(
  on: boolean,
  unsampledRoot?: UnsampledRoot,
  trustParent = false,
): void {
  state.on = on;
  state.tracer = on ? trace.getTracer('arbor') : undefined;
  state.unsampledRoot = on ? unsampledRoot : undefined;
  state.trustParent = on && trustParent;
}

/**
 * Turns every hook off until the function it returns turns them back on as they were: the
 * tracing bench's comparison within one process (`--toggle`, bench/tracing-toggle-preload.mjs),
 * which no other caller has. Spans already started end as usual.
 * @public
 */
export function pauseTracing(): () => void {
  const was = { ...state };
  setTracingOn(false);
  return () => Object.assign(state, was);
}

const tracer = (): Tracer => (state.tracer ??= trace.getTracer('arbor'));

/** The request id of the request a context belongs to (log lines read it). */
const REQUEST_ID = createContextKey('arbor.request_id');

type Carrier = Readonly<Record<string, string | string[] | undefined>>;

const headerGetter: TextMapGetter<Carrier> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => {
    const v = c[k];
    return Array.isArray(v) ? v[0] : v;
  },
};

/**
 * A server span and the context its request runs in; no context for a lean one (see
 * `startServerSpan`): its request runs in no trace context at all.
 */
export interface ServerSpan {
  readonly span: Span;
  readonly ctx: Context | undefined;
}

/**
 * A SERVER span for one request, a child of the caller's `traceparent` (W3C trace context in
 * `headers`) when it sends one, else a new trace; undefined while tracing is off. The
 * caller runs the request `within` it and ends it with `endServerSpan`.
 *
 * The sampler decides here, once per request, and everything after asks the span: an
 * unsampled request gets the SDK's non-recording span (its trace id and flags still reach
 * the logs and any outbound `traceparent`), and `attributes` is called only for a span
 * that records. The attributes therefore reach the span just after the sampler rather than
 * at its start: Arbor's samplers (parent-based, trace-id ratio) never read them.
 *
 * `lean`, for a door that only reads and calls out to nobody (the fast reads): a new root
 * that the sampler drops gets its ids and nothing else, neither an SDK span nor a context
 * to run in, which is most of what tracing costs a request that is not sampled (about
 * 0.7 µs of a 20 µs cached Get: BENCHMARKS.md). Nothing in such a request would read the
 * context: no statement or event is recorded under a span that does not record, and
 * nothing is sent on. Its door logs the ids itself (`traceFields`); lines that services log
 * during it carry none, as without tracing. A request that names a parent, or one the
 * sampler keeps, is traced as any other.
 */
export function startServerSpan(
  name: string,
  headers: Carrier,
  requestId: string,
  attributes: () => Attributes,
  lean = false,
): ServerSpan | undefined {
  if (!state.on) return undefined;
  if (lean && headers.traceparent === undefined && state.unsampledRoot !== undefined) {
    const dropped = state.unsampledRoot();
    if (dropped !== undefined) return { span: trace.wrapSpanContext(dropped), ctx: undefined };
  }
  const parent = propagation.extract(ROOT_CONTEXT, headers, headerGetter);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) {
    span.setAttributes(attributes());
    span.setAttribute('arbor.request_id', requestId);
  }
  return { span, ctx: trace.setSpan(parent, span).setValue(REQUEST_ID, requestId) };
}

/** `fn` run with `s` as the active span (so SQL, outbound calls and logs find it), or as is. */
export function within<T>(s: ServerSpan | undefined, fn: () => T): T {
  return s?.ctx === undefined ? fn() : context.with(s.ctx, fn);
}

/**
 * The trace and span ids a door's own log lines carry for a lean span (one that runs in no
 * context, so the log mixin cannot find it); nothing for any other, whose lines get them
 * from the context (`logContext`).
 */
export function traceFields(s: ServerSpan | undefined): { traceId?: string; spanId?: string } {
  if (s === undefined || s.ctx !== undefined) return {};
  const { traceId, spanId } = s.span.spanContext();
  return { traceId, spanId };
}

/**
 * Ends a server span: `name` (when the route was only known at the end), `attributes`, and
 * an error status when `failed` (semantic conventions: a 5xx for HTTP servers, for RPC the
 * codes that are the server's fault). Nothing for a span that does not record:
 * `attributes` is not even called.
 */
export function endServerSpan(
  s: ServerSpan | undefined,
  attributes: () => Attributes,
  failed: boolean,
  name?: string,
): void {
  if (s === undefined || !s.span.isRecording()) return;
  if (name !== undefined) s.span.updateName(name);
  s.span.setAttributes(attributes());
  if (failed) s.span.setStatus({ code: SpanStatusCode.ERROR });
  s.span.end();
}

/**
 * A span started now under `parent` (the active context unless given), its attributes set
 * only when the sampler kept it.
 */
function started(
  name: string,
  kind: SpanKind,
  attributes: () => Attributes,
  parent: Context = context.active(),
  links?: Link[],
): Span {
  const span = tracer().startSpan(name, { kind, ...(links ? { links } : {}) }, parent);
  if (span.isRecording()) span.setAttributes(attributes());
  return span;
}

/** `fn` run in `ctx`, `span` ending when it settles, marked failed when it throws. */
async function endsWith<T>(span: Span, ctx: Context, fn: () => Promise<T>): Promise<T> {
  try {
    return await context.with(ctx, fn);
  } catch (e) {
    if (span.isRecording()) {
      span.setAttribute('error.type', (e as Error).name || 'Error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
    }
    throw e;
  } finally {
    span.end();
  }
}

/**
 * `fn` inside a CLIENT span (an outbound HTTP request), given the headers that carry the
 * trace on (`traceparent`, also from a span that does not record: the callee then knows the
 * caller did not sample); without tracing, `fn({})` and nothing else (`attributes` is
 * not even called). `fn`'s answer
 * status, when it returns one, goes on the span; 4xx and 5xx mark it failed, as do throws.
 */
export async function withClientSpan<T>(
  name: string,
  attributes: () => Attributes,
  fn: (propagate: Record<string, string>) => Promise<T>,
  statusOf: (t: T) => number | undefined = () => undefined,
): Promise<T> {
  if (!state.on) return fn({});
  const span = started(name, SpanKind.CLIENT, attributes);
  const ctx = trace.setSpan(context.active(), span);
  const propagate: Record<string, string> = {};
  propagation.inject(ctx, propagate);
  return endsWith(span, ctx, async () => {
    const out = await fn(propagate);
    const status = span.isRecording() ? statusOf(out) : undefined;
    if (status !== undefined) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return out;
  });
}

/**
 * `fn` inside an INTERNAL span of its own (a background job: an event delivery, a
 * reconcile), a child of the active span if any, else the root of a trace of its own;
 * `outcome` adds attributes from what `fn` returned. Without tracing, `fn()` and nothing
 * else.
 */
export async function withSpan<T>(
  name: string,
  attributes: () => Attributes,
  fn: () => Promise<T>,
  outcome?: (t: T) => Attributes,
): Promise<T> {
  if (!state.on) return fn();
  const span = started(name, SpanKind.INTERNAL, attributes);
  return endsWith(span, trace.setSpan(context.active(), span), async () => {
    const out = await fn();
    if (outcome !== undefined && span.isRecording()) span.setAttributes(outcome(out));
    return out;
  });
}

/**
 * The active span's context as a W3C `traceparent` (`00-{trace id}-{span id}-{flags}`),
 * for work that is done later, elsewhere, on its behalf (an event's deliveries): undefined
 * while tracing is off or outside any trace. Only the sampled flag is kept, and never the
 * caller's `tracestate` or baggage: what is stored is Arbor's own span's id, with the trace
 * id and sampling decision it was given, in the one fixed format `storedParent` accepts.
 */
export function currentTraceparent(): string | undefined {
  if (!state.on) return undefined;
  const sc = trace.getActiveSpan()?.spanContext();
  if (sc === undefined || !isSpanContextValid(sc)) return undefined;
  const out = `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & TraceFlags.SAMPLED}`;
  return TRACEPARENT.test(out) ? out : undefined;
}

/**
 * Version 00 exactly, lowercase hex of the right lengths, flags 00 or 01, nothing around it
 * (W3C Trace Context, level 1, as `currentTraceparent` writes it).
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/;

/**
 * The span context a stored `traceparent` names, or undefined for anything that is not
 * exactly what `currentTraceparent` writes (with a trace id and span id that are not all
 * zeros). Total: whatever a row holds, it never throws.
 */
export function storedParent(traceparent: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string' || traceparent.length !== 55) return undefined;
  const m = TRACEPARENT.exec(traceparent);
  if (m === null) return undefined;
  const sc: SpanContext = {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: m[3] === '1' ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  };
  return isSpanContextValid(sc) ? sc : undefined;
}

/**
 * `fn` inside a PRODUCER span for one message sent on behalf of earlier work (an event sent
 * to its sink). The stored `traceparent` (by `currentTraceparent`) carries the trace id and
 * sampled flag of the request that caused it, which a caller may have chosen with its own
 * `traceparent`. So by default the send is a child of the active span (the job doing the
 * sending, a trace of Arbor's own) and only *links* the originating request: the sink is
 * sent Arbor's trace id, and the job's sampling decides. Where callers are trusted
 * (ARBOR_TRACE_TRUST_PARENT=true), the send joins the originating trace instead, as its
 * child, linked to the job, and the origin's sampled flag decides. Without a usable
 * `traceparent`, a child of the active span. Without tracing, `fn()` and nothing else.
 */
export async function withSpanFor<T>(
  traceparent: string | null | undefined,
  name: string,
  attributes: () => Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  if (!state.on) return fn();
  const active = context.active();
  const origin = storedParent(traceparent);
  const job = trace.getSpan(active)?.spanContext();
  const span =
    origin === undefined
      ? started(name, SpanKind.PRODUCER, attributes, active)
      : !state.trustParent
        ? started(name, SpanKind.PRODUCER, attributes, active, [{ context: origin }])
        : started(
            name,
            SpanKind.PRODUCER,
            attributes,
            trace.setSpanContext(active, origin),
            job !== undefined && isSpanContextValid(job) ? [{ context: job }] : undefined,
          );
  return endsWith(span, trace.setSpan(active, span), fn);
}

/**
 * A CLIENT span started now as a child of the active span, for work whose end is heard
 * elsewhere (a database query's response event); undefined while tracing is off, outside
 * any trace (the change feed's and the workers' idle polls would each be a trace of one
 * span otherwise), or under a span that does not record (an unsampled request: its
 * statements would not be recorded either). `name` and `attributes` are called only for a
 * span that is made.
 */
export function startChildSpan(name: () => string, attributes: () => Attributes): Span | undefined {
  if (!state.on) return undefined;
  const parent = context.active();
  if (trace.getSpan(parent)?.isRecording() !== true) return undefined;
  return started(name(), SpanKind.CLIENT, attributes, parent);
}

/** An event on the active span (an access decision's proof walk), when one is recording. */
export function spanEvent(name: string, attributes?: Attributes): void {
  if (!state.on) return;
  const span = trace.getActiveSpan();
  if (span?.isRecording() === true) span.addEvent(name, attributes);
}

/** The active span's trace id when it is sampled (the one a trace store will have). */
export function sampledTraceId(): string | undefined {
  if (!state.on) return undefined;
  const sc = trace.getActiveSpan()?.spanContext();
  return sc !== undefined && (sc.traceFlags & 1) === 1 ? sc.traceId : undefined;
}

/**
 * What every log line written in a request's context carries: its trace and span ids, and
 * its request id (docs/operations.md, "Logs"). Empty while tracing is off or outside one.
 */
export function logContext(): { traceId?: string; spanId?: string; requestId?: string } {
  if (!state.on) return {};
  const active = context.active();
  const sc = trace.getSpan(active)?.spanContext();
  if (sc === undefined) return {};
  const requestId = active.getValue(REQUEST_ID) as string | undefined;
  return {
    traceId: sc.traceId,
    spanId: sc.spanId,
    ...(requestId === undefined ? {} : { requestId }),
  };
}
