import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { systemPrincipal, type Principal } from '../auth/principal.js';
import { Code } from '../core/rpc-code.js';
import { isRpcError } from '../core/rpc-error.js';
import { claimMatchAccepts } from '../resources/identities/claim-match.js';
import type { IdentityService } from '../resources/identities/identity-service.js';
import { readClusterIssuer } from './cluster-trust.js';
import { KindInformer, type WatchVerb } from './informers.js';
import type { ArborKubeApi } from './kube-api.js';
import { API_GROUP, API_VERSION, AUTHORITY_PLURAL, type NamespaceAuthority } from './resources.js';

/**
 * The namespace has no NamespaceAuthority (or more than one): its objects change nothing
 * in Arbor. Not retried with backoff; a change of the authorities wakes the namespace.
 */
export class NoAuthority extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoAuthority';
  }
}

/**
 * The namespace's NamespaceAuthority names an identity that Arbor does not let it act as
 * (missing, static keys, a claim match that does not accept the namespace's
 * ServiceAccount). Retried with backoff: the fix is made in Arbor, which sends no events.
 */
export class AuthorityRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthorityRejected';
  }
}

/** Who the objects of a namespace act as. */
export interface AuthorityResolver {
  /**
   * A fresh principal for one reconcile (the Authorizer remembers grants per principal
   * object, so a new object per reconcile is what lets revoked bindings take effect).
   * @throws NoAuthority, AuthorityRejected, or anything the identity lookup throws.
   */
  principalFor(namespace: string): Promise<Principal>;
}

export interface NamespaceAuthoritiesOptions {
  kubeConfig: KubeConfig;
  kube: ArborKubeApi;
  identities: IdentityService;
  logger: Logger;
  /**
   * Namespaces that act as the Arbor administrator (organizations included). Set on the
   * reconciler's own Deployment, i.e. by whoever holds Arbor's database credentials.
   */
  adminNamespaces?: readonly string[];
  /** Called with the namespaces whose authority may have changed: requeue their objects. */
  onChange: (namespaces: readonly string[]) => void;
  /** The cluster's service-account issuer (default: read from the apiserver once). */
  issuer?: () => Promise<string>;
  /** How long a verified assignment is trusted before the identity is read again. */
  verifiedTtlMs?: number;
}

/** Where the fix is documented; every NoAuthority message points there. */
const HOW_TO = 'see "Authority" in docs/reconciler.md';

/**
 * The NamespaceAuthority objects of the cluster, watched, and the decision of which Arbor
 * principal a namespace's objects act as (docs/adr/0005-namespace-authority.md). Both
 * sides must agree: a cluster administrator ties the namespace to an identity, and that
 * identity's claim match must, in Arbor, accept the tokens of the namespace's
 * ServiceAccount from this cluster — so a namespace never gets more than its own
 * workloads could already get from /sts/exchange, and what the identity may do is
 * whatever its role bindings (set by an Arbor administrator or group owner) say.
 */
export class NamespaceAuthorities implements AuthorityResolver {
  private readonly informer: KindInformer<NamespaceAuthority>;
  private readonly admin: ReadonlySet<string>;
  /** Namespaces each authority named when last seen, to requeue them when it changes. */
  private readonly named = new Map<string, readonly string[]>();
  private readonly verified = new Map<string, { key: string; at: number }>();
  private readonly system = systemPrincipal('reconciler');
  private issuer: Promise<string> | undefined;

  constructor(private readonly o: NamespaceAuthoritiesOptions) {
    this.admin = new Set(o.adminNamespaces ?? []);
    this.informer = new KindInformer<NamespaceAuthority>(o.kubeConfig, o.kube, {
      kind: 'NamespaceAuthority',
      namespace: undefined,
      source: {
        path: `/apis/${API_GROUP}/${API_VERSION}/${AUTHORITY_PLURAL}`,
        list: () => o.kube.listAuthorities(),
      },
      logger: o.logger,
      onEvent: (verb, obj) => this.onEvent(verb, obj),
    });
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  async principalFor(namespace: string): Promise<Principal> {
    if (this.admin.has(namespace)) return this.system;
    // Before the first list "no authority" only means "not known yet"; saying NoAuthority
    // then would flap the status of every object at each start.
    for (let waited = 0; !this.informer.synced; waited += 50) {
      if (waited > 30_000) throw new Error('NamespaceAuthority objects could not be listed');
      await new Promise((r) => setTimeout(r, 50));
    }
    const mine = this.informer
      .list()
      .filter((a) => !a.metadata.deletionTimestamp && a.spec?.namespaces?.includes(namespace));
    const a = mine[0];
    if (!a) {
      throw new NoAuthority(
        `namespace "${namespace}" has no NamespaceAuthority, so its arbor.dev objects change ` +
          'nothing in Arbor; a cluster administrator can create one that names an Arbor ' +
          `identity for this namespace (${HOW_TO})`,
      );
    }
    if (mine.length > 1) {
      const names = mine.map((x) => x.metadata.name).sort();
      throw new NoAuthority(
        `namespace "${namespace}" is named by more than one NamespaceAuthority ` +
          `(${names.join(', ')}); keep exactly one (${HOW_TO})`,
      );
    }
    const uid = a.spec.identityUid;
    const key = `${a.metadata.name}@${a.metadata.resourceVersion ?? ''}`;
    const hit = this.verified.get(namespace);
    const now = Date.now();
    if (!hit || hit.key !== key || now - hit.at >= (this.o.verifiedTtlMs ?? 5_000)) {
      this.verified.delete(namespace);
      await this.verify(a, namespace);
      this.verified.set(namespace, { key, at: now });
    }
    return Object.freeze({ kind: 'identity', uid });
  }

  /** @throws AuthorityRejected unless the identity accepts the namespace's ServiceAccount. */
  private async verify(a: NamespaceAuthority, namespace: string): Promise<void> {
    const uid = a.spec.identityUid;
    const sa = a.spec.serviceAccountName || 'arbor';
    const which = `NamespaceAuthority "${a.metadata.name}" names identity ${uid}`;
    let cm;
    try {
      cm = (await this.o.identities.get(this.system, uid)).claimMatch;
    } catch (e) {
      if (isRpcError(e) && (e.code === Code.NOT_FOUND || e.code === Code.INVALID_ARGUMENT)) {
        throw new AuthorityRejected(`${which}, which does not exist in Arbor`);
      }
      throw e;
    }
    const issuer = await this.clusterIssuer();
    const subject = `system:serviceaccount:${namespace}:${sa}`;
    // The ServiceAccount can have a token minted for any audience, and extra claims only
    // narrow which of its tokens pass: issuer and subject decide whose identity this is.
    const claims = { ...cm?.claims, iss: issuer, sub: subject, aud: cm?.audience };
    if (!cm || !claimMatchAccepts(cm, claims)) {
      throw new AuthorityRejected(
        `${which}, which does not accept tokens of ServiceAccount ${namespace}/${sa} from ` +
          `issuer ${issuer}; an owner of its group in Arbor must give it a claimMatch for ` +
          `that issuer and subject "${subject}" before this namespace may act as it`,
      );
    }
  }

  private clusterIssuer(): Promise<string> {
    if (!this.issuer) {
      const read = this.o.issuer ?? (() => readClusterIssuer(this.o.kubeConfig));
      this.issuer = read();
      // A failed read is not remembered.
      this.issuer.catch(() => (this.issuer = undefined));
    }
    return this.issuer;
  }

  private onEvent(verb: WatchVerb, obj: NamespaceAuthority): void {
    const name = obj.metadata.name;
    const before = this.named.get(name) ?? [];
    const now = verb === 'delete' ? [] : (obj.spec?.namespaces ?? []);
    if (verb === 'delete') this.named.delete(name);
    else this.named.set(name, now);
    const touched = [...new Set([...before, ...now])];
    for (const ns of touched) this.verified.delete(ns);
    if (touched.length > 0) this.o.onChange(touched);
  }
}
