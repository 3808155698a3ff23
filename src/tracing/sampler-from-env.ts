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
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  if (!(NAMES as readonly string[]).includes(name))
    throw new Error(`OTEL_TRACES_SAMPLER=${name} is not supported (${NAMES.join(', ')})`);
  const ratio = (): number => {
    const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
    if (raw === undefined || raw === '') return 1;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || n > 1)
      throw new Error(`OTEL_TRACES_SAMPLER_ARG=${raw} is not a ratio from 0 to 1`);
    return n;
  };
  switch (name as (typeof NAMES)[number]) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
  }
}
