import type { Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { manifestKey, type Manifest, type ManifestKind } from './plan-manifests.js';
import type { Seen } from './plan-server.js';
import type { InSync, PlanChange } from './plan-types.js';

/** Where a manifest's resource is: an uid, or "made by this manifest earlier in the plan". */
export type Place = { uid: string; object?: undefined } | { uid?: undefined; object: string };

/** What a plan is being built from and what it has found so far. */
export class PlanContext {
  /** Manifest key → the uid of its resource, or undefined when the plan creates it. */
  readonly uids = new Map<string, string | undefined>();
  /** Every uid some manifest stands for: what --prune leaves alone. */
  readonly claimed = new Set<string>();
  readonly changes: PlanChange[] = [];
  readonly unchanged: InSync[] = [];
  readonly notes: string[] = [];
  private readonly keys: Set<string>;

  constructor(
    readonly s: Session,
    readonly manifests: readonly Manifest[],
    readonly now: number,
  ) {
    this.keys = new Set(manifests.map(manifestKey));
  }

  /**
   * Where the object a reference names is.
   * @throws CliError (exit 3) when the manifests hold no such object.
   */
  placeOf(kind: ManifestKind, namespace: string, name: string, from: string, field: string): Place {
    const key = manifestKey({ kind, namespace, name });
    if (!this.keys.has(key))
      throw new CliError(
        `${from}: ${field} names ${key}, which is not in the manifests`,
        EXIT.INVALID,
      );
    if (!this.uids.has(key))
      throw new CliError(
        `${from}: ${field} names ${key}, which is planned later (a cycle?)`,
        EXIT.INVALID,
      );
    const uid = this.uids.get(key);
    return uid === undefined ? { object: key } : { uid };
  }

  /** The manifest's resource exists as `seen` and matches it (no change). */
  inSync(object: string, seen: Seen): void {
    const uid = String(seen.item.uid);
    this.found(object, uid);
    this.unchanged.push({ object, uid, etag: seen.etag });
  }

  /** The manifest stands for `uid`. @throws CliError when another manifest does too. */
  found(object: string, uid: string): void {
    if (this.claimed.has(uid)) {
      const other = [...this.uids].find(([, u]) => u === uid)?.[0] ?? 'another manifest';
      throw new CliError(`${object} and ${other} both stand for ${uid}`, EXIT.INVALID);
    }
    this.claimed.add(uid);
    this.uids.set(object, uid);
  }

  /** The manifest's resource is created by this plan. */
  creates(object: string, change: PlanChange): void {
    this.uids.set(object, undefined);
    this.changes.push(change);
  }
}

/**
 * The one resource of `candidates` a manifest stands for, if any.
 * @throws CliError (exit 3) when several match: the manifest must say which (adoptUid).
 */
export function matchOne(object: string, what: string, candidates: Seen[]): Seen | undefined {
  if (candidates.length <= 1) return candidates[0];
  const uids = candidates.map((c) => String(c.item.uid)).join(', ');
  throw new CliError(
    `${object}: ${candidates.length} resources are ${what} (${uids}); set spec.adoptUid to the one it stands for`,
    EXIT.INVALID,
  );
}

/** The field changes from `have` (absent: a create) to `want`, for people to read. */
export function fieldChanges(
  want: Record<string, unknown>,
  have?: Record<string, unknown>,
): Array<{ field: string; from?: unknown; to?: unknown }> {
  return Object.entries(want).map(([field, to]) =>
    have === undefined ? { field, to } : { field, from: have[field], to },
  );
}
