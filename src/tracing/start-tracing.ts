import { setTracingOn } from './spans.js';

/** What stops tracing: flushes the spans not yet exported, then shuts the exporter down. */
export type StopTracing = () => Promise<void>;

/**
 * Whether the standard variables ask for traces: `OTEL_TRACES_EXPORTER` names an exporter
 * (`otlp`, or `console` to see spans on stderr) and `OTEL_SDK_DISABLED` is not `true`.
 * Unlike the SDK's own default (otlp), tracing is off unless asked for: an IAM service
 * should not send its requests' shape anywhere nobody configured.
 *
 * @throws Error naming the variable for an exporter Arbor does not ship.
 */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && s !== 'none');
  for (const e of exporters)
    if (e !== 'otlp' && e !== 'console')
      throw new Error(`OTEL_TRACES_EXPORTER=${e} is not supported (otlp, console or none)`);
  return exporters.length > 0;
}

/**
 * Starts tracing when the environment asks for it (`tracingWanted`), else does nothing and
 * loads nothing: the SDK is imported only here, on demand, so a process without tracing
 * never pays for it. The rest of the configuration is the SDK's own reading of the standard
 * variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_*, OTEL_TRACES_SAMPLER,
 * OTEL_TRACES_SAMPLER_ARG, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*).
 *
 * `version` is the package's, for `service.version`.
 *
 * @throws Error for an unsupported exporter (see `tracingWanted`).
 */
export async function startTracing(
  version: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StopTracing | undefined> {
  if (!tracingWanted(env)) return undefined;
  const { registerTracing } = await import('./tracing-sdk.js');
  const { stop, unsampledRoot, trustParent } = registerTracing(env, version);
  setTracingOn(true, unsampledRoot, trustParent);
  return async () => {
    setTracingOn(false);
    await stop();
  };
}
