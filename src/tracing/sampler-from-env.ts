import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
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
}

/**
 * The sampler the standard variables name (OpenTelemetry's SDK environment variables:
 * `OTEL_TRACES_SAMPLER`, default `parentbased_always_on`, and `OTEL_TRACES_SAMPLER_ARG`, the
 * ratio, default 1), built here rather than by the provider so that the doors can ask the
 * very sampler the SDK uses before they make a span (tracing-sdk.ts). Where the SDK would
 * log a bad value and trace everything, this refuses it by name: an IAM service should not
 * quietly export every request's shape because of a typo.
 *
 * @throws Error naming the variable for a sampler the JavaScript SDK does not have, or a
 *   ratio that is not a number from 0 to 1.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): EnvSampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  if (!(NAMES as readonly string[]).includes(name))
    throw new Error(`OTEL_TRACES_SAMPLER=${name} is not supported (${NAMES.join(', ')})`);
  const { root, rootRatio } = rootOf(name.replace(/^parentbased_/, ''), env);
  return {
    sampler: name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root,
    rootRatio,
  };
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
