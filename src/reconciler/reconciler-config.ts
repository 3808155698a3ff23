import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ConfigError } from '../config.js';

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

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') {
    throw new ConfigError(`${name} must be true or false, not "${raw}"`);
  }
  return raw === 'true';
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    throw new ConfigError(`${name} must be an integer of at least ${min}, not "${raw}"`);
  }
  return n;
}

/** @throws ConfigError naming the variable at fault. */
export function loadReconcilerConfig(env: NodeJS.ProcessEnv = process.env): ReconcilerConfig {
  return Object.freeze({
    watchNamespace: env.ARBOR_WATCH_NAMESPACE || undefined,
    // POD_NAMESPACE comes from the downward API in deploy/base.
    leaseNamespace: env.POD_NAMESPACE || 'arbor-system',
    leaseName: env.ARBOR_LEASE_NAME || 'arbor-reconciler',
    identity: env.POD_NAME || `${hostname()}-${randomBytes(4).toString('hex')}`,
    leaderElection: bool(env, 'ARBOR_LEADER_ELECTION', true),
    clusterTrust: bool(env, 'ARBOR_CLUSTER_TRUST', true),
    resyncMs: int(env, 'ARBOR_RESYNC_SECONDS', 600, 10) * 1000,
    workers: int(env, 'ARBOR_RECONCILE_WORKERS', 4, 1),
    ratePerSecond: int(env, 'ARBOR_RECONCILE_RATE', 20, 1),
    healthPort: int(env, 'ARBOR_RECONCILER_HEALTH_PORT', 8081, 0),
    adminNamespaces: Object.freeze(
      (env.ARBOR_RECONCILER_ADMIN_NAMESPACES ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  });
}
