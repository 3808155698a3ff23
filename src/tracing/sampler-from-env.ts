import { trace, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-node';

const NAMES = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * A sampler and how it decides a new root: the share of roots it samples, 1 for always_on
 * (and its parent-based form), 0 for always_off, the ratio for the trace-id ratio samplers,
 * which keep a root when its trace id's four 32-bit words XORed are below the ratio's share
 * of 2^32 (unsampled-root.ts decides roots by the same rule, from the id's bytes).
 */
export interface EnvSampler {
  sampler: Sampler;
  rootRatio: number;
  /** Whether a caller's `traceparent` sampled flag is obeyed (ARBOR_TRACE_TRUST_PARENT). */
  trustParent: boolean;
}

/**
 * The sampler the standard variables name (OpenTelemetry's SDK environment variables:
 * `OTEL_TRACES_SAMPLER`, default `parentbased_always_on`, and `OTEL_TRACES_SAMPLER_ARG`, the
 * ratio, default 1), built here rather than by the provider so that the doors can ask the
 * very sampler the SDK uses before they make a span (tracing-sdk.ts). Where the SDK would
 * log a bad value and trace everything, this refuses it by name: an IAM service should not
 * quietly export every request's shape because of a typo.
 *
 * A caller's `traceparent` is anyone's to send, so its sampled flag decides nothing unless
 * `ARBOR_TRACE_TRUST_PARENT=true` says the callers are trusted (a mesh or gateway that sets
 * it): otherwise a request with a remote parent is sampled at the root rule's ratio by a
 * draw of Arbor's own, not by the flag (which would let anyone force full tracing at a 0 %
 * ratio) nor by the caller's trace id (which it could pick to pass a ratio's test). The
 * request still joins the caller's trace; only the decision is Arbor's. Parents within the
 * process (local spans) are obeyed as ever.
 *
 * @throws Error naming the variable for a sampler the JavaScript SDK does not have, a
 *   ratio that is not a number from 0 to 1, or ARBOR_TRACE_TRUST_PARENT not true or false.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): EnvSampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  if (!(NAMES as readonly string[]).includes(name))
    throw new Error(`OTEL_TRACES_SAMPLER=${name} is not supported (${NAMES.join(', ')})`);
  const trustParent = trustOf(env);
  const { root, rootRatio } = rootOf(name.replace(/^parentbased_/, ''), env);
  const chosen = name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
  return {
    sampler: trustParent ? chosen : new UntrustedRemoteSampler(chosen, rootRatio),
    rootRatio,
    trustParent,
  };
}

/** `ARBOR_TRACE_TRUST_PARENT`: false when unset; `true` or `false` else. */
function trustOf(env: NodeJS.ProcessEnv): boolean {
  const raw = env.ARBOR_TRACE_TRUST_PARENT?.trim().toLowerCase();
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new Error(`ARBOR_TRACE_TRUST_PARENT=${raw} is not true or false`);
}

/**
 * `inner` for every span but one whose parent is remote (a caller's `traceparent`): that
 * one is sampled with probability `ratio` by a random draw, whatever the caller's flag and
 * trace id say.
 */
export class UntrustedRemoteSampler implements Sampler {
  constructor(
    private readonly inner: Sampler,
    private readonly ratio: number,
  ) {}

  shouldSample(
    ctx: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (trace.getSpanContext(ctx)?.isRemote !== true)
      return this.inner.shouldSample(ctx, traceId, name, kind, attributes, links);
    const keep = this.ratio >= 1 || (this.ratio > 0 && Math.random() < this.ratio);
    return {
      decision: keep ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
    };
  }

  toString(): string {
    return `UntrustedRemoteSampler{${this.inner.toString()}, ratio=${this.ratio}}`;
  }
}

/**
 * What every name is at heart, alone or under parent-based: one rule for new roots, and
 * the share of them it keeps.
 */
function rootOf(rule: string, env: NodeJS.ProcessEnv): { root: Sampler; rootRatio: number } {
  if (rule === 'always_on') return { root: new AlwaysOnSampler(), rootRatio: 1 };
  if (rule === 'always_off') return { root: new AlwaysOffSampler(), rootRatio: 0 };
  const ratio = ratioOf(env);
  return { root: new TraceIdRatioBasedSampler(ratio), rootRatio: ratio };
}

/** `OTEL_TRACES_SAMPLER_ARG` as a ratio: 1 when unset, else a number from 0 to 1. */
function ratioOf(env: NodeJS.ProcessEnv): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new Error(`OTEL_TRACES_SAMPLER_ARG=${raw} is not a ratio from 0 to 1`);
  return n;
}
