import { describePrincipal, type Principal } from '../../auth/principal.js';
import { parentOf } from '../../core/uidp.js';
import type { Tx } from '../tx.js';
import {
  eventTypeOf,
  type AuditEvent,
  type CascadedChange,
  type ChangeCause,
  type Operation,
  type Presented,
} from './audit-event.js';
import type { AuditStore } from './audit-store.js';
import { newEventId } from './event-id.js';
import { referencesAsUids } from './references-as-uids.js';

/** One change, as a service reports it from inside its transaction. */
export interface Change {
  /** The resource type constant, e.g. GROUP_TYPE. */
  type: string;
  operation: Operation;
  uid: string;
  /** The domain object before the change (absent for a create). */
  before?: unknown;
  /** The domain object after the change (absent for a delete). */
  after?: unknown;
  /** Why, when nobody asked for this change directly (see `revokeBindings`). */
  cause?: ChangeCause;
  /** What went with this change, each recorded on its own. */
  cascaded?: CascadedChange[];
}

/** What every service calls, inside `uow.run`, once per write path. */
export interface ChangeRecorder {
  /** @throws whatever the store throws; the caller's transaction then rolls back. */
  record(tx: Tx, p: Principal, change: Change): Promise<void>;
}

/**
 * Records nothing, said out loud: a service is always given a recorder, so a wiring
 * mistake cannot drop the trail; only tests of a service alone and the benchmark's
 * baseline (`compose({ audit: false })`) pass this one.
 */
export const NO_AUDIT: ChangeRecorder = { record: () => Promise.resolve() };

/** Shows a domain object as the API does (the v2 wire form); wired in compose.ts. */
export type Presenter = (type: string, resource: unknown) => Presented;

/**
 * Keys never recorded, wherever they appear. The wire forms already omit them; this is
 * the second lock, for a field a future wire form might add.
 */
const SECRET_KEYS = new Set([
  'code',
  'codeHash',
  'clientSecret',
  'secret',
  'password',
  'privateKey',
  'token',
]);

function scrub(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(scrub);
  if (v === null || typeof v !== 'object' || v instanceof Date) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!SECRET_KEYS.has(k)) out[k] = scrub(x);
  return out;
}

/** Fields that change on every write and say nothing about what changed. */
const NOISE = new Set(['updateTime']);

function changedFields(before: Presented | null, after: Presented | null): string[] {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  return [...keys]
    .filter((k) => !NOISE.has(k) && JSON.stringify(before?.[k]) !== JSON.stringify(after?.[k]))
    .sort();
}

/**
 * The audit trail and the event outbox behind one call: a service records a change in
 * the transaction that makes it, so a rolled-back write leaves no record and a committed
 * one always has its record and its queued deliveries (docs/events.md).
 */
export class AuditLog implements ChangeRecorder {
  constructor(
    private readonly store: AuditStore,
    private readonly present: Presenter,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async record(tx: Tx, p: Principal, c: Change): Promise<void> {
    await this.store.append(tx, this.event(p, c));
  }

  /** The record `c` makes; exported for tests and benchmarks. */
  event(p: Principal, c: Change): AuditEvent {
    const show = (x: unknown) =>
      x === undefined || x === null
        ? null
        : referencesAsUids(scrub(this.present(c.type, x)) as Presented);
    const before = show(c.before);
    const after = show(c.after);
    const time = this.now();
    return {
      id: newEventId(time.getTime()),
      time,
      actor: describePrincipal(p),
      actorKind: p.kind,
      // Copied: the principal's list is frozen and the record outlives the request.
      actors: p.kind === 'identity' && p.restriction?.actors ? [...p.restriction.actors] : null,
      door: p.via?.door ?? (p.kind === 'system' ? 'reconciler' : 'rest'),
      requestId: p.via?.requestId ?? null,
      credential: p.via?.credential ?? null,
      resourceType: c.type,
      resourceUid: c.uid,
      resourceParentUid: parentOf(c.uid) ?? null,
      operation: c.operation,
      eventType: eventTypeOf(c.type, c.operation),
      changedFields: c.operation === 'update' ? changedFields(before, after) : [],
      before,
      after,
      cause: c.cause ?? null,
      cascaded: c.cascaded ?? [],
    };
  }
}
