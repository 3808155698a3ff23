import type { Principal } from '../../auth/principal.js';
import type { RevokedTokens } from '../../auth/revoked-tokens.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound, permissionDenied } from '../../core/rpc-error.js';
import type { Visibility } from '../../core/visibility.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import type { IssuedTokenFlusher } from './issued-token-flusher.js';
import {
  API_TOKEN_TYPE,
  ISSUED_TOKEN_LIST,
  JTI_PATTERN,
  type IssuedToken,
  type IssuedTokenStore,
  issuedTokenV2,
} from './issued-token.js';
import type { RevocationStore } from './revocation-store.js';

export interface TokenSessionServiceDeps {
  uow: UnitOfWork;
  pager: ListPager;
  store: IssuedTokenStore;
  revocations: RevocationStore;
  revoked: RevokedTokens;
  audit: ChangeRecorder;
  /** This process's pending records, written before a list (read-your-own-issues). */
  flusher?: Pick<IssuedTokenFlusher, 'flush'>;
}

const DOWN_SCOPED =
  'a down-scoped token may not list or revoke sessions: use an unrestricted token of the identity';

/**
 * `arbor auth sessions`: an identity's live API tokens and the tokens exchanged from them,
 * listed and revoked one by one (docs/oauth.md, "Sessions").
 *
 * Visibility, decided before any read: an identity sees its own identity's tokens, and
 * only with an unrestricted token (a down-scoped token is PERMISSION_DENIED: it must not
 * revoke its siblings or its parent); the admin sees every identity's. Nobody else, not
 * even a holder of identity.update (who may still revoke a token it holds with
 * `/oauth2/revoke`): the jtis of another identity's tokens are that identity's business.
 * A token the caller may not see, unknown, expired or revoked is NOT_FOUND alike.
 */
export class TokenSessionService {
  constructor(private readonly d: TokenSessionServiceDeps) {}

  /** @throws RpcError PERMISSION_DENIED (a down-scoped token, a system principal), INVALID_ARGUMENT. */
  async list(p: Principal, req: ListRequest): Promise<ListPage<IssuedToken>> {
    const visibility = visibilityOf(p);
    await this.d.flusher?.flush();
    return this.d.pager.page(ISSUED_TOKEN_LIST, req, visibility, (q) =>
      this.d.uow.read((tx) => this.d.store.list(tx, q)),
    );
  }

  /**
   * Revoke the caller's live token `jti` (and with it every token exchanged from it),
   * recorded in the audit trail in the same transaction.
   * @throws RpcError INVALID_ARGUMENT (jti), PERMISSION_DENIED (down-scoped), NOT_FOUND.
   */
  async revoke(p: Principal, jti: string): Promise<IssuedToken> {
    const visibility = visibilityOf(p);
    if (!JTI_PATTERN.test(jti))
      throw invalidField('jti', 'must be a token id (at most 64 characters)');
    await this.d.flusher?.flush();
    const owner = visibility.kind === 'all' ? undefined : visibility.scopes[0];
    const t = await this.d.uow.run(async (tx) => {
      const found = await this.d.store.get(tx, jti, owner);
      if (found === undefined) throw notFound(API_TOKEN_TYPE, jti);
      await this.d.revocations.revoke(tx, jti, found.identityUid, found.expireTime);
      await this.d.audit.record(tx, p, {
        type: API_TOKEN_TYPE,
        operation: 'delete',
        uid: found.identityUid,
        before: issuedTokenV2(found),
      });
      return found;
    });
    this.d.revoked.forget?.(jti);
    return t;
  }
}

function visibilityOf(p: Principal): Visibility {
  if (p.kind === 'admin') return { kind: 'all' };
  if (p.kind !== 'identity') throw permissionDenied('only an identity or the admin has sessions');
  if (p.restriction !== undefined) throw permissionDenied(DOWN_SCOPED);
  return { kind: 'scopes', scopes: [p.uid] };
}
