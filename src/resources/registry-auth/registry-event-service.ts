import { z } from 'zod';
import { systemPrincipal, type Principal } from '../../auth/principal.js';
import { invalidField } from '../../core/rpc-error.js';
import type { RepoService } from '../repos/repo-service.js';
import { DIGEST_PATTERN, TAG_NAME_PATTERN } from '../tags/tag.js';
import type { TagService } from '../tags/tag-service.js';
import { parseRegistryPath } from './registry-path.js';

/** One event of a Distribution notification envelope, as far as Arbor reads it. */
export const registryEventSchema = z.looseObject({
  id: z.string().optional(),
  timestamp: z.string(),
  action: z.string(),
  target: z
    .looseObject({
      mediaType: z.string().optional(),
      digest: z.string().optional(),
      repository: z.string().optional(),
      tag: z.string().optional(),
    })
    .optional(),
});
const envelopeSchema = z.looseObject({ events: z.array(z.unknown()).max(10_000).default([]) });

export interface EventOutcome {
  applied: number;
  ignored: number;
}

/**
 * Makes tags real from the registry's notifications (spec §5.5): a manifest pushed with
 * a tag creates or moves that tag (and creates the repo on its first push); a delete
 * removes the tag, the tags of a digest, or a repo's tags. Every event carries the
 * registry's own timestamp, so redelivery — the registry retries until it hears 2xx —
 * changes nothing. Events Arbor cannot place (a path outside its groups, a blob) are
 * ignored rather than refused, so they are not retried forever.
 */
export class RegistryEventService {
  /** The registry acts as a component of Arbor: its pushes were authorized by our tokens. */
  readonly #as: Principal = systemPrincipal('registry-notifications');

  constructor(
    private readonly repos: RepoService,
    private readonly tags: TagService,
  ) {}

  /**
   * @throws RpcError INVALID_ARGUMENT when the body is not a notification envelope;
   *   UNAVAILABLE/INTERNAL from the database (the registry then retries).
   */
  async apply(body: unknown): Promise<EventOutcome> {
    const envelope = envelopeSchema.safeParse(body);
    if (!envelope.success) throw invalidField('events', 'must be a list of registry events');
    const outcome: EventOutcome = { applied: 0, ignored: 0 };
    for (const raw of envelope.data.events) {
      const parsed = registryEventSchema.safeParse(raw);
      const done = parsed.success ? await this.one(parsed.data) : false;
      if (done) outcome.applied++;
      else outcome.ignored++;
    }
    return outcome;
  }

  private async one(e: z.infer<typeof registryEventSchema>): Promise<boolean> {
    const at = microTime(e.timestamp);
    const path = e.target?.repository && parseRegistryPath(e.target.repository);
    if (!at || !path) return false;
    const { tag, digest } = e.target ?? {};
    if (tag !== undefined && !TAG_NAME_PATTERN.test(tag)) return false;
    if (digest !== undefined && !DIGEST_PATTERN.test(digest)) return false;

    if (e.action === 'push') {
      // Blob pushes and manifests pushed by digest carry no tag: nothing to show.
      if (!tag || !digest) return false;
      const repo = await this.repos.ensureByName(this.#as, path.groupUid, path.repoName);
      if (!repo) return false;
      await this.tags.recordPush(this.#as, { parentUid: repo.uid, name: tag, digest, at });
      return true;
    }
    if (e.action === 'delete') {
      const repo = await this.repos.findByName(path.groupUid, path.repoName);
      if (!repo) return false;
      await this.tags.recordRemoval(this.#as, {
        parentUid: repo.uid,
        ...(tag ? { name: tag } : digest ? { digest } : {}),
        at,
      });
      return true;
    }
    return false;
  }
}

/**
 * The registry writes RFC 3339 times with nanoseconds; PostgreSQL keeps microseconds.
 * Normalise to UTC with six fractional digits so the same event always compares equal.
 * @returns undefined for anything that is not such a time.
 */
export function microTime(s: string): string | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  const frac = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}
