import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  createContextKey,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';

/**
 * Whether tracing was started in this process (start-tracing.ts). Every hook below asks this
 * first and does nothing else when it is off, so a process without tracing allocates no
 * span, reads no context and never loads the SDK. The OpenTelemetry API is itself one
 * process-wide registry, so this flag is too (the one module-level state, and why).
 */
const state = { on: false };

/** True once `startTracing` has registered the SDK. */
export function tracingOn(): boolean {
  return state.on;
}

/** Called by start-tracing.ts only, once its provider is registered; tests turn it off. */
export function setTracingOn(on: boolean): void {
  state.on = on;
}

const tracer = () => trace.getTracer('arbor');

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

/** A server span and the context its request runs in. */
export interface ServerSpan {
  readonly span: Span;
  readonly ctx: Context;
}

/**
 * A SERVER span for one request, a child of the caller's `traceparent` (W3C trace context in
 * `headers`) when it sends one, else a new trace; undefined while tracing is off. The
 * caller runs the request `within` it and ends it with `endServerSpan`.
 */
export function startServerSpan(
  name: string,
  headers: Carrier,
  requestId: string,
  attributes: Attributes,
): ServerSpan | undefined {
  if (!state.on) return undefined;
  const parent = propagation.extract(ROOT_CONTEXT, headers, headerGetter);
  const span = tracer().startSpan(
    name,
    { kind: SpanKind.SERVER, attributes: { ...attributes, 'arbor.request_id': requestId } },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span).setValue(REQUEST_ID, requestId) };
}

/** `fn` run with `s` as the active span (so SQL, outbound calls and logs find it), or as is. */
export function within<T>(s: ServerSpan | undefined, fn: () => T): T {
  return s === undefined ? fn() : context.with(s.ctx, fn);
}

/**
 * Ends a server span: `name` (when the route was only known at the end), `attributes`, and
 * an error status when `failed` (semantic conventions: a 5xx for HTTP servers, for RPC the
 * codes that are the server's fault).
 */
export function endServerSpan(
  s: ServerSpan | undefined,
  attributes: Attributes,
  failed: boolean,
  name?: string,
): void {
  if (s === undefined) return;
  if (name !== undefined) s.span.updateName(name);
  s.span.setAttributes(attributes);
  if (failed) s.span.setStatus({ code: SpanStatusCode.ERROR });
  s.span.end();
}

/**
 * `fn` inside a CLIENT span (an outbound HTTP request), given the headers that carry the
 * trace on (`traceparent`); without tracing, `fn({})` and nothing else (`attributes` is
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
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes: attributes() });
  const ctx = trace.setSpan(context.active(), span);
  const propagate: Record<string, string> = {};
  propagation.inject(ctx, propagate);
  try {
    const out = await context.with(ctx, () => fn(propagate));
    const status = statusOf(out);
    if (status !== undefined) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return out;
  } catch (e) {
    span.setAttribute('error.type', (e as Error).name || 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
    throw e;
  } finally {
    span.end();
  }
}

/**
 * `fn` inside an INTERNAL span of its own (a background job: an event delivery), a child of
 * the active span if any; without tracing, `fn()` and nothing else.
 */
export async function withSpan<T>(
  name: string,
  attributes: () => Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  if (!state.on) return fn();
  const span = tracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes: attributes() });
  try {
    return await context.with(trace.setSpan(context.active(), span), fn);
  } catch (e) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
    throw e;
  } finally {
    span.end();
  }
}

/**
 * A CLIENT span started now as a child of the active span, for work whose end is heard
 * elsewhere (a database query's response event); undefined while tracing is off or outside
 * any trace (the change feed's and the workers' idle polls would each be a trace of one
 * span otherwise). `attributes` is called only for a span that is made.
 */
export function startChildSpan(name: () => string, attributes: () => Attributes): Span | undefined {
  if (!state.on) return undefined;
  const parent = context.active();
  if (trace.getSpan(parent) === undefined) return undefined;
  return tracer().startSpan(name(), { kind: SpanKind.CLIENT, attributes: attributes() }, parent);
}

/** An event on the active span (an access decision's proof walk), when one is recording. */
export function spanEvent(name: string, attributes?: Attributes): void {
  if (!state.on) return;
  trace.getActiveSpan()?.addEvent(name, attributes);
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
