import type { ArborStatus, Condition, ConditionStatus } from './resources.js';

/**
 * Condition reasons. `Ready` says whether the Arbor resource exists and matches the spec;
 * `Synced` says whether the last reconcile worked. They differ on purpose: a resource that
 * was created and then hits a database outage stays Ready=True with Synced=False, which is
 * what a user looking at `kubectl get` needs to know (Crossplane's split).
 */
export const Reason = {
  Available: 'Available',
  ReconcileSuccess: 'ReconcileSuccess',
  ReconcileError: 'ReconcileError',
  WaitingForReference: 'WaitingForReference',
  InvalidSpec: 'InvalidSpec',
  /** A RoleBinding past its spec.expireTime: its binding grants nothing and is not remade. */
  Expired: 'Expired',
  Pending: 'Pending',
  Deleting: 'Deleting',
  DeleteFailed: 'DeleteFailed',
  /** The namespace has no (or more than one) NamespaceAuthority: nothing is changed. */
  NoAuthority: 'NoAuthority',
  /** The namespace's NamespaceAuthority names an identity Arbor does not let it use. */
  AuthorityRejected: 'AuthorityRejected',
  /** Observe mode: Arbor differs from the spec, and nothing was written (Ready, Drifted). */
  Drifted: 'Drifted',
  /** Observe mode, Drifted=False: Arbor matches the spec. */
  InSync: 'InSync',
} as const;

export interface ConditionInput {
  status: ConditionStatus;
  reason: string;
  message: string;
}

export function findCondition(
  status: ArborStatus | undefined,
  type: Condition['type'],
): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * The condition `type` set to `next`. `lastTransitionTime` moves only when the status
 * flips (metav1.Condition semantics), so re-asserting the same state changes nothing.
 */
export function nextCondition(
  previous: Condition | undefined,
  type: Condition['type'],
  next: ConditionInput,
  generation: number,
  now: Date,
): Condition {
  const flipped = previous === undefined || previous.status !== next.status;
  return {
    type,
    status: next.status,
    reason: next.reason,
    // The API server caps condition messages at 32 KiB; stay well below it.
    message: next.message.length > 1024 ? `${next.message.slice(0, 1021)}...` : next.message,
    lastTransitionTime: flipped
      ? now.toISOString().replace(/\.\d+Z$/, 'Z')
      : previous.lastTransitionTime,
    observedGeneration: generation,
  };
}

export interface DesiredStatus {
  uid: string | undefined;
  generation: number;
  ready: ConditionInput | 'keep';
  synced: ConditionInput;
  /** Observe mode only: the Drifted condition (absent: the condition is removed). */
  drifted?: ConditionInput;
}

/**
 * The status to write: Ready (unless `keep`), Synced, the uid and observedGeneration.
 * Other condition types someone else added are preserved.
 */
export function buildStatus(
  current: ArborStatus | undefined,
  want: DesiredStatus,
  now: Date,
): ArborStatus {
  const prevReady = findCondition(current, 'Ready');
  let ready: Condition;
  if (want.ready === 'keep' && prevReady) ready = prevReady;
  else {
    const input: ConditionInput =
      want.ready === 'keep'
        ? { status: 'Unknown', reason: Reason.Pending, message: 'not reconciled yet' }
        : want.ready;
    ready = nextCondition(prevReady, 'Ready', input, want.generation, now);
  }
  const synced = nextCondition(
    findCondition(current, 'Synced'),
    'Synced',
    want.synced,
    want.generation,
    now,
  );
  const others = (current?.conditions ?? []).filter(
    (c) => c.type !== 'Ready' && c.type !== 'Synced' && c.type !== 'Drifted',
  );
  if (want.drifted) {
    const prev = findCondition(current, 'Drifted');
    others.unshift(nextCondition(prev, 'Drifted', want.drifted, want.generation, now));
  }
  // observedGeneration says which spec Ready describes: a failure that keeps an older
  // verdict must not claim the new generation was seen through (clients wait on it).
  const kept = want.ready === 'keep' && prevReady !== undefined;
  const observedGeneration = kept ? current?.observedGeneration : want.generation;
  const out: ArborStatus = { conditions: [ready, synced, ...others] };
  if (observedGeneration !== undefined) out.observedGeneration = observedGeneration;
  const uid = want.uid ?? current?.uid;
  if (uid !== undefined) out.uid = uid;
  if (want.drifted) out.mode = 'observe';
  return out;
}

/** Whether two statuses say the same thing; a no-op reconcile must not write. */
export function sameStatus(a: ArborStatus | undefined, b: ArborStatus): boolean {
  return canonical(a ?? {}) === canonical(b);
}

function canonical(s: ArborStatus): string {
  const conditions = [...(s.conditions ?? [])]
    .sort((x, y) => x.type.localeCompare(y.type))
    .map((c) => [
      c.type,
      c.status,
      c.reason,
      c.message,
      c.lastTransitionTime,
      c.observedGeneration,
    ]);
  return JSON.stringify([s.uid ?? null, s.observedGeneration ?? null, s.mode ?? null, conditions]);
}

/** A Ready transition worth an Event: the status or the reason changed. */
export function readyTransition(
  before: ArborStatus | undefined,
  after: ArborStatus,
): Condition | undefined {
  const a = findCondition(before, 'Ready');
  const b = findCondition(after, 'Ready');
  if (!b) return undefined;
  if (a && a.status === b.status && a.reason === b.reason) return undefined;
  return b;
}
