import type { Authorizer } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import { invalidField } from '../../core/rpc-error.js';
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
}

export interface RegistryToken {
  token: string;
  expiresIn: number;
  issuedAt: Date;
}

/** Short-lived: a pull or push asks again; Docker wants at least 60 s. */
export const REGISTRY_TOKEN_TTL_S = 300;
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
 * The registry's token server (Distribution token authentication, spec §5.5): for each
 * requested scope, the token's `access` lists exactly the actions the caller's
 * capabilities allow on that repository's group, decided by the same Authorizer as every
 * API call. Anonymous callers and callers without any matching capability get a token
 * with empty access; the registry then answers them 401/403 itself.
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
    const access: RegistryAccess[] = [];
    for (const s of requested) {
      const actions = p ? await this.allowed(p, s) : [];
      if (actions.length > 0) access.push({ type: s.type, name: s.name, actions });
    }
    const ttl = this.d.ttlS ?? REGISTRY_TOKEN_TTL_S;
    const subject = p?.kind === 'identity' ? p.uid : (p?.kind ?? '');
    const { token, issuedAt } = await this.d.sign(subject, access, ttl);
    return { token, expiresIn: ttl, issuedAt };
  }

  private async allowed(p: Principal, s: RegistryAccess): Promise<string[]> {
    if (s.type === 'registry' && s.name === 'catalog') {
      return this.d.authz.isSuperuser(p) ? s.actions.filter((a) => a === '*') : [];
    }
    if (s.type !== 'repository') return [];
    const path = parseRegistryPath(s.name);
    if (!path) return [];
    const wanted = new Set<RepoAction>(
      s.actions.flatMap((a) =>
        a === '*' ? [...REPO_ACTIONS] : REPO_ACTIONS.filter((r) => r === a),
      ),
    );
    if (wanted.size === 0) return [];
    // One statement: the group's existence and the repo's uid (two reads before).
    const { group, repoUid } = await this.d.uow.read((tx) =>
      this.d.repos.locate(tx, path.groupUid, path.repoName),
    );
    if (!group) return [];
    const granted = await this.grantable(
      p,
      wanted,
      repoUid ?? path.groupUid,
      repoUid !== undefined,
    );
    if (s.actions.includes('*') && granted.length === REPO_ACTIONS.length) granted.push('*');
    return granted;
  }

  /** The wanted actions `p` holds every needed capability for, at `at`. */
  private async grantable(
    p: Principal,
    wanted: ReadonlySet<RepoAction>,
    at: string,
    repoExists: boolean,
  ): Promise<string[]> {
    const granted: string[] = [];
    for (const action of REPO_ACTIONS) {
      if (!wanted.has(action) || (action === 'delete' && !repoExists)) continue;
      // The first push of a repo creates it in Arbor (from the registry's notification).
      const needs =
        action === 'push' && !repoExists ? [...NEEDS.push, 'repo.create' as const] : NEEDS[action];
      let ok = true;
      for (const cap of needs) if (!(await this.d.authz.can(p, cap, at))) ok = false;
      if (ok) granted.push(action);
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
