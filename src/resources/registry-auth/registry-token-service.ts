import type { Authorizer, RequestContext } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import { invalidField } from '../../core/rpc-error.js';
import { REPO_TYPE } from '../repos/repo.js';
import type { RepoStore } from '../repos/repo-store.js';
import type { UnitOfWork } from '../tx.js';
import { parseRegistryPath } from './registry-path.js';

/** One entry of a registry token's `access` claim (Distribution token spec). */
export interface RegistryAccess {
  type: string;
  name: string;
  actions: string[];
}

/** Signs a registry token: Arbor's keys, `aud` = the registry's service name. */
export type RegistryTokenSigner = (
  subject: string,
  access: RegistryAccess[],
  ttlS: number,
) => Promise<{ token: string; issuedAt: Date; expiry: Date }>;

export interface RegistryTokenServiceDeps {
  uow: UnitOfWork;
  repos: RepoStore;
  authz: Authorizer;
  sign: RegistryTokenSigner;
  /** The registry's service name: the `service` a client must ask for. */
  service: string;
  ttlS?: number;
  /** The clock that bounds a token by its grants' expiry (tests move it). */
  now?: () => number;
}

export interface RegistryToken {
  token: string;
  expiresIn: number;
  issuedAt: Date;
}

/** Short-lived: a pull or push asks again; Docker wants at least 60 s. */
export const REGISTRY_TOKEN_TTL_S = 300;
/**
 * Distribution accepts a token up to this long past its `exp` (its clock-skew leeway), so
 * a token's `exp` is this much before the earliest expiry of the grants behind it: from a
 * binding's `expireTime` on, no token it granted opens the registry.
 */
export const REGISTRY_EXP_LEEWAY_S = 60;
/** An action whose grants would leave a token shorter than this is left out instead. */
const MIN_TOKEN_S = 1;
const MAX_SCOPES = 16;
const REPO_ACTIONS = ['pull', 'push', 'delete'] as const;
type RepoAction = (typeof REPO_ACTIONS)[number];

/**
 * What each action needs at the repo's group (a missing repo also needs `repo.create` to
 * push). A push may overwrite a tag that exists, and neither the token (one `push` per
 * repository) nor the registry tells a new tag from a moved one: so `push` needs what
 * moving a tag needs through the API, `tag.update`, not only `tag.create`.
 */
const NEEDS: Record<RepoAction, Capability[]> = {
  pull: ['repo.blobs.get'],
  push: ['manifest.create', 'tag.create', 'tag.update'],
  delete: ['manifest.delete', 'tag.delete'],
};

/**
 * `resource.type` of a conditional binding's condition, decided at the token server: the
 * repository kind's own type, as on the REST and gRPC doors, so that one condition reads
 * the same wherever a repository is decided.
 */
export const REGISTRY_RESOURCE_TYPE = REPO_TYPE;

/**
 * The registry's token server (Distribution token authentication, spec §5.5): for each
 * requested scope, the token's `access` lists exactly the actions the caller's
 * capabilities allow on that repository's group, decided by the same Authorizer as every
 * API call. Anonymous callers and callers without any matching capability get a token
 * with empty access; the registry then answers them 401/403 itself.
 *
 * A conditional binding grants an action where its condition holds for that repository:
 * `resource.type` is `repository`, `resource.name` the requested registry path (docs/
 * registry.md), `request.capability` each capability the action needs, `token.claims`
 * the caller's token's upstream claims. It is decided once, at signing: the token lives
 * at most REGISTRY_TOKEN_TTL_S, so a condition on `request.time` holds for that long.
 */
export class RegistryTokenService {
  readonly service: string;

  constructor(private readonly d: RegistryTokenServiceDeps) {
    this.service = d.service;
  }

  /**
   * @param p the caller, or undefined for an anonymous request.
   * @throws RpcError INVALID_ARGUMENT for another service or too many scopes.
   */
  async issue(
    p: Principal | undefined,
    service: string | undefined,
    scopes: string[],
  ): Promise<RegistryToken> {
    if (service !== undefined && service !== this.d.service)
      throw invalidField('service', `must be ${this.d.service}`);
    const requested = parseScopes(scopes);
    if (requested.length > MAX_SCOPES)
      throw invalidField('scope', `at most ${MAX_SCOPES} scopes per token`);
    const now = (this.d.now ?? Date.now)();
    // Whole seconds the token may live before the registry's leeway reaches a grant's
    // expiry, less one: the signer's clock reads a moment later and its `iat` may round up.
    const lifeOf = (until: number) => Math.floor((until - now) / 1000) - REGISTRY_EXP_LEEWAY_S - 1;
    let ttl = this.d.ttlS ?? REGISTRY_TOKEN_TTL_S;
    const access: RegistryAccess[] = [];
    for (const s of requested) {
      const held = p ? await this.allowed(p, s) : new Map<string, number>();
      // An action about to expire is left out rather than signed for a moment.
      const actions = [...held].filter(([, until]) => lifeOf(until) >= MIN_TOKEN_S);
      for (const [, until] of actions) ttl = Math.min(ttl, lifeOf(until));
      const names = actions.map(([a]) => a);
      if (s.actions.includes('*') && REPO_ACTIONS.every((a) => names.includes(a))) names.push('*');
      if (names.length > 0) access.push({ type: s.type, name: s.name, actions: names });
    }
    const subject = p?.kind === 'identity' ? p.uid : (p?.kind ?? '');
    const { token, issuedAt } = await this.d.sign(subject, access, ttl);
    return { token, expiresIn: ttl, issuedAt };
  }

  /**
   * The actions `p` may take on scope `s`, each with the epoch ms until which its grants
   * hold (Infinity: no expiry). A repository's `*` is added by the caller, once every
   * action it stands for is in.
   */
  private async allowed(p: Principal, s: RegistryAccess): Promise<Map<string, number>> {
    const none = new Map<string, number>();
    if (s.type === 'registry' && s.name === 'catalog') {
      const all = this.d.authz.isSuperuser(p) && s.actions.includes('*');
      return all ? new Map([['*', Infinity]]) : none;
    }
    if (s.type !== 'repository') return none;
    const path = parseRegistryPath(s.name);
    if (!path) return none;
    const wanted = new Set<RepoAction>(
      s.actions.flatMap((a) =>
        a === '*' ? [...REPO_ACTIONS] : REPO_ACTIONS.filter((r) => r === a),
      ),
    );
    if (wanted.size === 0) return none;
    // One statement: the group's existence and the repo's uid (two reads before).
    const { group, repoUid } = await this.d.uow.read((tx) =>
      this.d.repos.locate(tx, path.groupUid, path.repoName),
    );
    if (!group) return none;
    const ctx: RequestContext = {
      resource: { type: REGISTRY_RESOURCE_TYPE, name: s.name },
      ...(p.kind === 'identity' && p.claims !== undefined ? { claims: p.claims } : {}),
    };
    return this.grantable(p, wanted, repoUid ?? path.groupUid, repoUid !== undefined, ctx);
  }

  /**
   * The wanted actions `p` holds every needed capability for, at `at`, each until the
   * first of its capabilities lapses.
   */
  private async grantable(
    p: Principal,
    wanted: ReadonlySet<RepoAction>,
    at: string,
    repoExists: boolean,
    ctx: RequestContext,
  ): Promise<Map<string, number>> {
    const granted = new Map<string, number>();
    for (const action of REPO_ACTIONS) {
      if (!wanted.has(action) || (action === 'delete' && !repoExists)) continue;
      // The first push of a repo creates it in Arbor (from the registry's notification).
      const needs =
        action === 'push' && !repoExists ? [...NEEDS.push, 'repo.create' as const] : NEEDS[action];
      let until: number | undefined = Infinity;
      for (const cap of needs) {
        const held = await this.d.authz.heldUntil(p, cap, at, ctx);
        until = held === undefined || until === undefined ? undefined : Math.min(until, held);
      }
      if (until !== undefined) granted.set(action, until);
    }
    return granted;
  }
}

/**
 * `type:name:actions` scopes; several may share one parameter, space-separated. The name
 * may itself hold a colon (a port in some clients' names), so the actions are after the last.
 * Malformed scopes are dropped: they grant nothing.
 */
export function parseScopes(raw: string[]): RegistryAccess[] {
  const out: RegistryAccess[] = [];
  for (const one of raw.flatMap((r) => r.split(' ')).filter(Boolean)) {
    const first = one.indexOf(':');
    const last = one.lastIndexOf(':');
    if (first <= 0 || last === first) continue;
    const type = one.slice(0, first);
    const name = one.slice(first + 1, last);
    const actions = [
      ...new Set(
        one
          .slice(last + 1)
          .split(',')
          .filter(Boolean),
      ),
    ];
    if (name === '' || actions.length === 0) continue;
    out.push({ type, name, actions });
  }
  return out;
}
