import type { PooledIdGenerator } from './pooled-id-generator.js';
import type { UnsampledRoot } from './spans.js';

/**
 * The doors' early decision on a new root, for a sampler that keeps `rootRatio` of roots
 * (sampler-from-env.ts): a root it would drop is dropped here, before any span or context
 * is made, and takes its ids from `ids` (their text made only if read); one it would keep
 * is left to the provider, which draws that same trace id from `ids` and, by the same
 * rule, keeps it. The rule is the SDK's trace-id ratio rule (TraceIdRatioBasedSampler: the
 * id's four 32-bit words XORed, below ⌊ratio × (2^32 − 1)⌋), read here from the id's bytes
 * instead of its text; a unit test holds the two to the same decisions. Undefined when
 * every root is kept: there is nothing to decide early.
 */
export function unsampledRootOf(
  rootRatio: number,
  ids: PooledIdGenerator,
): UnsampledRoot | undefined {
  if (rootRatio >= 1) return undefined;
  const upperBound = Math.floor(Math.max(0, rootRatio) * 0xffffffff);
  return () => (ids.nextTraceIdWord() < upperBound ? undefined : ids.takeUnsampledRoot());
}
