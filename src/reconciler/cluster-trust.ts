import { OpenidApi, WellKnownApi, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { systemPrincipal } from '../auth/principal.js';
import type { TrustedKeyService } from '../resources/trusted-keys/trusted-key-service.js';

/** The generated client types these answers as strings but hands back parsed JSON. */
function asJson(v: unknown): unknown {
  return typeof v === 'string' ? (JSON.parse(v) as unknown) : v;
}

/**
 * The cluster's service-account issuer (`iss` of its ServiceAccount tokens), from the
 * apiserver's discovery document. @throws when the cluster publishes none.
 */
export async function readClusterIssuer(kc: KubeConfig): Promise<string> {
  const discovery = asJson(
    await kc.makeApiClient(WellKnownApi).getServiceAccountIssuerOpenIDConfiguration(),
  ) as { issuer?: unknown };
  if (typeof discovery.issuer !== 'string')
    throw new Error('the cluster publishes no service-account issuer');
  return discovery.issuer;
}

export interface ClusterTrustOptions {
  kubeConfig: KubeConfig;
  trustedKeys: TrustedKeyService;
  logger: Logger;
  /** How often the cluster's keys are re-read, to follow rotations (default 5 min). */
  refreshMs?: number;
}

/**
 * Makes projected service-account tokens work out of the box: reads the cluster's
 * service-account issuer and its key set through the apiserver, with the reconciler's
 * own credentials, and publishes them as trusted keys for that issuer. Identities that
 * name the cluster's issuer then verify without Arbor ever reaching the (usually
 * private) discovery endpoint.
 */
export class ClusterTrust {
  private timer: NodeJS.Timeout | undefined;
  private readonly principal = systemPrincipal('reconciler');

  constructor(private readonly o: ClusterTrustOptions) {}

  /** Read and publish once; returns the issuer and whether the stored keys changed. */
  async refresh(): Promise<{ issuer: string; changed: boolean }> {
    const kc = this.o.kubeConfig;
    const issuer = await readClusterIssuer(kc);
    const jwks = asJson(await kc.makeApiClient(OpenidApi).getServiceAccountIssuerOpenIDKeyset());
    const server = kc.getCurrentCluster()?.server ?? 'unknown';
    const changed = await this.o.trustedKeys.publish(
      this.principal,
      issuer,
      jwks,
      `kubernetes:${server}`,
    );
    if (changed) this.o.logger.info({ issuer }, 'published the cluster service-account keys');
    return { issuer, changed };
  }

  /** Refresh now and then periodically; failures are logged and retried next period. */
  start(): void {
    const tick = () =>
      this.refresh().catch((err: unknown) =>
        this.o.logger.warn({ err }, 'could not read the cluster service-account keys'),
      );
    void tick();
    this.timer = setInterval(() => void tick(), this.o.refreshMs ?? 5 * 60_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
