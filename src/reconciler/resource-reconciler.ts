import type { Logger } from 'pino';
import { systemPrincipal, type Principal } from '../auth/principal.js';
import type { ManagedResourceService } from '../resources/managed/managed-resource-service.js';
import { Code, codeName, isRetryable } from '../core/rpc-code.js';
import { isRpcError } from '../core/rpc-error.js';
import {
  buildStatus,
  findCondition,
  readyTransition,
  Reason,
  sameStatus,
  type DesiredStatus,
} from './conditions.js';
import { AuthorityRejected, NoAuthority, type AuthorityResolver } from './authority.js';
import type { EventSink } from './events.js';
import {
  addFinalizer,
  deletesExternal,
  hasFinalizer,
  isDeleting,
  removeFinalizer,
} from './finalizer.js';
import { isKubeConflict, isKubeNotFound, kubeStatus, type ArborKubeApi } from './kube-api.js';
import { driftMessage, modeOf, type NamespaceModes } from './observe-mode.js';
import {
  Observation,
  ResourceExpired,
  WaitingForReference,
  type KindReconciler,
  type RefResolver,
  type SyncResult,
} from './kind-sync.js';
import { objectKey, type ArborObject, type ArborStatus } from './resources.js';
import { DONE, RETRY, type Outcome } from './work-queue.js';

/** Counters the tests (and a curious operator, through logs) read. */
export class ReconcileStats {
  reconciles = 0;
  statusWrites = 0;
  readonly perKey = new Map<string, number>();

  count(key: string): void {
    this.reconciles++;
    this.perKey.set(key, (this.perKey.get(key) ?? 0) + 1);
  }
}

export interface ResourceReconcilerDeps {
  kube: ArborKubeApi;
  events: EventSink;
  logger: Logger;
  refs: RefResolver;
  /** Who each namespace's objects act as in Arbor. */
  authority: AuthorityResolver;
  /** Marks the resources objects manage, so that other writers are refused. */
  managed?: ManagedResourceService;
  stats: ReconcileStats;
  /** Namespaces' `arbor.dev/mode`; without it only objects' own annotations count. */
  modes?: NamespaceModes;
  now?: () => Date;
}

type Spec = { deletionPolicy?: string; adoptUid?: string };

/** `NOT_FOUND` → `NotFound`: condition reasons are CamelCase. */
function camel(code: Parameters<typeof codeName>[0]): string {
  return codeName(code)
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, _s: string, c: string) => c.toUpperCase());
}

/**
 * One reconcile of one object, the same for every kind: read the object fresh, handle
 * deletion through the finalizer, make sure the finalizer is on, let the kind converge
 * Arbor, then record the outcome in `status` — only if it changed — and tell the queue
 * what to do next. Errors become conditions and queue decisions here, in one place.
 */
export class ResourceReconciler<S extends Spec> {
  private readonly now: () => Date;
  /** Keys whose spec was rejected, with the inputs it was rejected for. */
  private readonly rejected = new Map<string, string>();
  /** `manager uid` pairs known to be recorded in Arbor, so an object in sync claims once. */
  private readonly claimed = new Set<string>();

  constructor(
    private readonly kind: KindReconciler<S>,
    private readonly d: ResourceReconcilerDeps,
  ) {
    this.now = d.now ?? (() => new Date());
  }

  async reconcile(namespace: string, name: string): Promise<Outcome> {
    const key = objectKey(this.kind.kind, namespace, name);
    this.d.stats.count(key);
    let obj = await this.d.kube.get<S>(this.kind.kind, namespace, name);
    if (!obj) {
      this.rejected.delete(key);
      return DONE;
    }
    if (isDeleting(obj)) return this.finalize(obj);

    const generation = obj.metadata.generation ?? 0;
    // A spec the service rejected stays rejected until someone edits it, or until an
    // object it references gets a different uid (remembered here, in memory only: after
    // a restart each rejected object is looked at once more, which writes nothing).
    const inputs = this.inputsPrint(obj, generation);
    const ready = findCondition(obj.status, 'Ready');
    if (
      ready?.reason === Reason.InvalidSpec &&
      ready.observedGeneration === generation &&
      this.rejected.get(key) === inputs
    ) {
      return DONE;
    }
    this.rejected.delete(key);

    let want: DesiredStatus;
    let outcome: Outcome;
    let result: SyncResult | undefined;
    try {
      // Authority first: an object that may change nothing gets no finalizer either, so
      // that it can always be deleted.
      const principal = this.onBehalfOf(obj, await this.d.authority.principalFor(namespace));
      if ((await modeOf(obj.metadata, this.d.modes)) === 'observe') {
        // Observe mode: read as the namespace's principal, write nothing to Arbor, add no
        // finalizer and claim nothing; say what enforcing would write.
        const seen = new Observation();
        want = this.observed(
          await this.kind.sync(obj, this.d.refs, principal, seen),
          seen,
          generation,
        );
        await this.writeStatus(obj, want, false);
        return DONE;
      }
      if (!hasFinalizer(obj)) obj = await addFinalizer(this.d.kube, this.kind.kind, obj);
      result = await this.kind.sync(obj, this.d.refs, principal);
      await this.claim(principal, result);
      want = {
        uid: result.uid,
        generation,
        ready: { status: 'True', reason: Reason.Available, message: `in sync with ${result.uid}` },
        synced: { status: 'True', reason: Reason.ReconcileSuccess, message: '' },
      };
      outcome = DONE;
    } catch (e) {
      ({ want, outcome } = this.failure(key, e, generation));
      const final: string[] = [Reason.InvalidSpec, Reason.Expired];
      if (want.ready !== 'keep' && final.includes(want.ready.reason)) {
        this.rejected.set(key, inputs);
      }
    }
    if (result && result.action !== 'unchanged') this.announce(obj, result);
    await this.writeStatus(
      obj,
      want,
      result?.action === 'created' || result?.action === 'recreated',
    );
    return outcome;
  }

  /** The status of an object in observe mode: Drifted says what enforcing would write. */
  private observed(r: SyncResult, seen: Observation, generation: number): DesiredStatus {
    const synced = {
      status: 'True',
      reason: Reason.ReconcileSuccess,
      message: 'observe mode: nothing is written to Arbor',
    } as const;
    const uid = r.uid === '' ? undefined : r.uid;
    if (seen.action === undefined) {
      return {
        uid,
        generation,
        ready: { status: 'True', reason: Reason.Available, message: `in sync with ${r.uid}` },
        synced,
        drifted: { status: 'False', reason: Reason.InSync, message: '' },
      };
    }
    const message = driftMessage(seen);
    const reason = { create: 'WouldCreate', update: 'WouldUpdate', recreate: 'WouldRecreate' }[
      seen.action
    ];
    return {
      uid,
      generation,
      ready: { status: 'False', reason: Reason.Drifted, message },
      synced,
      drifted: { status: 'True', reason, message },
    };
  }

  /** The namespace's principal, acting for this object: what it writes, it manages. */
  private onBehalfOf(obj: ArborObject<S>, p: Principal): Principal {
    const { namespace, name } = obj.metadata;
    const manager = `${this.kind.kind} ${namespace}/${name}`;
    return p.kind === 'admin' ? p : { ...p, manager };
  }

  /**
   * Make sure Arbor records this object as the manager of its resource. Creates and
   * updates record it in their own transaction; a resource found already in sync (after
   * an upgrade, or adopted as it was) is claimed once per process.
   * @throws RpcError FAILED_PRECONDITION when another object manages it.
   */
  private async claim(p: Principal, r: SyncResult): Promise<void> {
    const key = `${p.kind === 'admin' ? '' : p.manager} ${r.uid}`;
    if (this.claimed.has(key) || !this.d.managed) return;
    if (r.action === 'unchanged' || r.action === 'adopted') {
      await this.d.managed.claim(p, this.kind.table, r.uid);
    }
    this.claimed.add(key);
  }

  private inputsPrint(obj: ArborObject<S>, generation: number): string {
    const { namespace } = obj.metadata;
    const refs = this.kind
      .references(obj.spec ?? ({} as S))
      .map((r) => this.d.refs.peek(r.kind, namespace, r.name) ?? '');
    return JSON.stringify([generation, refs]);
  }

  private failure(
    key: string,
    e: unknown,
    generation: number,
  ): { want: DesiredStatus; outcome: Outcome } {
    const base = { uid: undefined, generation };
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof NoAuthority || e instanceof AuthorityRejected) {
      const reason = e instanceof NoAuthority ? Reason.NoAuthority : Reason.AuthorityRejected;
      const c = { status: 'False', reason, message } as const;
      // NoAuthority waits for a NamespaceAuthority event (and the resync); a rejected one
      // is fixed in Arbor, which sends no events, so it is retried with backoff.
      return {
        want: { ...base, ready: c, synced: c },
        outcome: e instanceof NoAuthority ? DONE : RETRY,
      };
    }
    if (e instanceof WaitingForReference) {
      const c = { status: 'False', reason: Reason.WaitingForReference, message } as const;
      return { want: { ...base, ready: c, synced: c }, outcome: RETRY };
    }
    if (e instanceof ResourceExpired) {
      // Nothing to retry: only a change of the spec (a later expireTime) can change this.
      const c = { status: 'False', reason: Reason.Expired, message } as const;
      return { want: { ...base, ready: c, synced: c }, outcome: DONE };
    }
    if (isRpcError(e) && e.code === Code.INVALID_ARGUMENT) {
      const c = { status: 'False', reason: Reason.InvalidSpec, message } as const;
      return { want: { ...base, ready: c, synced: c }, outcome: DONE };
    }
    const synced = { status: 'False', reason: Reason.ReconcileError, message } as const;
    if (isRpcError(e) && !isRetryable(e.code)) {
      // NOT_FOUND (a parentUid that does not exist), PERMISSION_DENIED, FAILED_PRECONDITION:
      // the world may change, so retry, but with the key's backoff.
      const ready = { status: 'False', reason: camel(e.code), message } as const;
      return { want: { ...base, ready, synced }, outcome: RETRY };
    }
    if (!isRpcError(e) && kubeStatus(e) === undefined) {
      this.d.logger.error({ err: e, key }, 'reconcile failed unexpectedly');
    } else {
      this.d.logger.warn({ key, error: message }, 'reconcile failed; will retry');
    }
    return { want: { ...base, ready: 'keep', synced }, outcome: RETRY };
  }

  private announce(obj: ArborObject<S>, r: SyncResult): void {
    const kind = this.kind.kind;
    if (r.action === 'recreated') {
      this.d.events.emit(
        kind,
        obj,
        'Warning',
        'Recreated',
        `the Arbor ${kind} was missing (deleted outside Kubernetes?); created ${r.uid}`,
      );
    } else if (r.action !== 'unchanged') {
      const verb = ({ created: 'Created', adopted: 'Adopted', updated: 'Updated' } as const)[
        r.action
      ];
      this.d.events.emit(kind, obj, 'Normal', verb, `${verb.toLowerCase()} ${kind} ${r.uid}`);
    }
  }

  /**
   * Write the status when it differs from what is there. After a create the uid must
   * land, or the next reconcile would create a second resource; so that one write is
   * retried a few times in place before giving up loudly.
   */
  private async writeStatus(
    obj: ArborObject<S>,
    want: DesiredStatus,
    mustLand: boolean,
  ): Promise<void> {
    const next = buildStatus(obj.status, want, this.now());
    if (sameStatus(obj.status, next)) return;
    const { namespace, name } = obj.metadata;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.d.kube.patchStatus(this.kind.kind, namespace, name, next);
        this.d.stats.statusWrites++;
        break;
      } catch (e) {
        if (isKubeNotFound(e)) return;
        if (!mustLand || attempt >= 5) {
          if (mustLand) {
            this.d.logger.error(
              { err: e, kind: this.kind.kind, namespace, name, uid: next.uid },
              'created an Arbor resource but could not record its uid; it may be duplicated',
            );
          }
          throw e;
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
    this.eventOnTransition(obj, obj.status, next);
  }

  private eventOnTransition(
    obj: ArborObject<S>,
    before: ArborStatus | undefined,
    after: ArborStatus,
  ): void {
    const drift = findCondition(after, 'Drifted');
    if (drift?.status === 'True' && drift.message !== findCondition(before, 'Drifted')?.message) {
      this.d.events.emit(this.kind.kind, obj, 'Warning', Reason.Drifted, drift.message);
      return;
    }
    const c = readyTransition(before, after);
    if (!c || c.reason === Reason.Available) return; // success is announced by the action
    // Waiting for a reference is an expected, passing state, not a problem to look at.
    const normal = c.status === 'True' || c.reason === Reason.WaitingForReference;
    this.d.events.emit(this.kind.kind, obj, normal ? 'Normal' : 'Warning', c.reason, c.message);
  }

  /**
   * Give the resource back to REST. Only what this very object manages is released, so
   * this needs no authority of the namespace (and works after a revocation).
   */
  private async release(obj: ArborObject<S>, uid: string): Promise<void> {
    const kind = this.kind.kind;
    const self = this.onBehalfOf(obj, systemPrincipal('reconciler'));
    try {
      await this.d.managed?.release(self, this.kind.table, uid);
    } catch (e) {
      if (!isRpcError(e) || e.code === Code.UNAVAILABLE) throw e;
      // NOT_FOUND (already gone), FAILED_PRECONDITION (someone else's): nothing to give back.
    }
    this.d.events.emit(
      kind,
      obj,
      'Normal',
      'Orphaned',
      `left ${kind} ${uid} in Arbor (deletionPolicy: Orphan)`,
    );
  }

  /** The object is being deleted: delete the Arbor resource (unless Orphan), then let go. */
  private async finalize(obj: ArborObject<S>): Promise<Outcome> {
    if (!hasFinalizer(obj)) return DONE;
    const kind = this.kind.kind;
    const uid = obj.status?.uid;
    if (uid && (await modeOf(obj.metadata, this.d.modes)) === 'observe') {
      // Observe mode writes nothing to Arbor, deletes included: the resource stays, managed.
      this.d.events.emit(
        kind,
        obj,
        'Normal',
        'Observed',
        `left ${kind} ${uid} in Arbor (observe mode)`,
      );
    } else if (uid && deletesExternal(obj)) {
      try {
        // Without authority the Arbor resource stays, and so does the finalizer: letting
        // go would orphan it silently. deletionPolicy: Orphan is the way out.
        const p = await this.d.authority.principalFor(obj.metadata.namespace);
        await this.kind.remove(uid, this.onBehalfOf(obj, p));
        this.d.events.emit(kind, obj, 'Normal', 'Deleted', `deleted ${kind} ${uid}`);
      } catch (e) {
        if (!isRpcError(e) || e.code !== Code.NOT_FOUND) {
          let message = e instanceof Error ? e.message : String(e);
          if (e instanceof NoAuthority || e instanceof AuthorityRejected) {
            message += '; to let the object go anyway, set spec.deletionPolicy: Orphan';
          }
          const generation = obj.metadata.generation ?? 0;
          await this.writeStatus(
            obj,
            {
              uid,
              generation,
              ready: {
                status: 'False',
                reason: Reason.Deleting,
                message: 'waiting to delete the Arbor resource',
              },
              synced: { status: 'False', reason: Reason.DeleteFailed, message },
            },
            false,
          );
          return RETRY;
        }
      }
    } else if (uid) {
      await this.release(obj, uid);
    }
    try {
      await removeFinalizer(this.d.kube, kind, obj);
    } catch (e) {
      if (isKubeNotFound(e)) return DONE;
      if (isKubeConflict(e)) return RETRY;
      throw e;
    }
    return DONE;
  }
}
