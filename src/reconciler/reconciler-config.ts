import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parseEnvironment } from '../config.js';

/** The reconciler's own settings, read from the environment once, next to `loadConfig()`. */
export interface ReconcilerConfig {
  /** Watch this namespace only; undefined watches every namespace. */
  watchNamespace: string | undefined;
  /** Where the leader Lease lives (the reconciler's own namespace). */
  leaseNamespace: string;
  leaseName: string;
  /** This replica's name in the Lease. */
  identity: string;
  leaderElection: boolean;
  resyncMs: number;
  workers: number;
  ratePerSecond: number;
  /** Port of `/healthz` and `/readyz`; 0 disables them. */
  healthPort: number;
  /** Publish the cluster's service-account keys for the STS (see cluster-trust.ts). */
  clusterTrust: boolean;
  /** Namespaces whose objects act as the Arbor administrator (see authority.ts). */
  adminNamespaces: readonly string[];
}

/**
 * The reconciler's variables are part of the one schema in `src/config.ts` (same boolean
 * spelling, same messages); this only shapes them.
 * @throws ConfigError naming the variable at fault.
 */
export function loadReconcilerConfig(env: NodeJS.ProcessEnv = process.env): ReconcilerConfig {
  const e = parseEnvironment(env);
  return Object.freeze({
    watchNamespace: e.ARBOR_WATCH_NAMESPACE,
    // POD_NAMESPACE comes from the downward API in deploy/base.
    leaseNamespace: e.POD_NAMESPACE,
    leaseName: e.ARBOR_LEASE_NAME,
    identity: e.POD_NAME ?? `${hostname()}-${randomBytes(4).toString('hex')}`,
    leaderElection: e.ARBOR_LEADER_ELECTION,
    clusterTrust: e.ARBOR_CLUSTER_TRUST,
    resyncMs: e.ARBOR_RESYNC_SECONDS * 1000,
    workers: e.ARBOR_RECONCILE_WORKERS,
    ratePerSecond: e.ARBOR_RECONCILE_RATE,
    healthPort: e.ARBOR_RECONCILER_HEALTH_PORT,
    adminNamespaces: e.ARBOR_RECONCILER_ADMIN_NAMESPACES,
  });
}
