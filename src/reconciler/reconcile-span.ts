import { withSpan } from '../tracing/spans.js';
import type { KindName } from './resources.js';
import type { Outcome } from './work-queue.js';

/**
 * One reconcile of one object as a trace of its own while tracing is on (a background job,
 * sampled like a request without a caller): `reconcile {Kind}`, with the object's kind,
 * namespace and name (`k8s.namespace.name` is the semantic conventions'; a custom resource
 * has no convention of its own for kind and name) and what the queue is told next. The
 * services it calls, their SQL and any event they record (whose deliveries then join this
 * trace) are under it.
 */
export function reconcileSpan(
  kind: KindName,
  namespace: string,
  name: string,
  fn: () => Promise<Outcome>,
): Promise<Outcome> {
  return withSpan(
    `reconcile ${kind}`,
    () => ({
      'k8s.namespace.name': namespace,
      'arbor.k8s.kind': kind,
      'arbor.k8s.name': name,
    }),
    fn,
    (o) => ({ 'arbor.reconcile.outcome': o.kind }),
  );
}
