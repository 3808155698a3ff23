import { useState } from 'preact/hooks';
import { listPage, post } from '../api';
import { getToken } from '../auth';
import { plural } from '../model';
import { PagedList, RowsTable, usePaged } from '../paged';
import { ago, localTime } from '../time';
import { ConfirmDialog, NameOf, Section, Uid } from '../ui';

/** One live API token of the caller (`GET /iam/v2beta1/tokens`). */
interface Session {
  jti: string;
  identity: string;
  parentJti?: string;
  actor?: string;
  scope?: string[];
  groups?: string[];
  issueTime: string;
  expireTime: string;
}

/** The `jti` of the token this console signed in with, if it is a JWT with one. */
function ownJti(): string | undefined {
  try {
    const part = (getToken() ?? '').split('.')[1] ?? '';
    const jti = (JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as { jti?: unknown })
      .jti;
    return typeof jti === 'string' ? jti : undefined;
  } catch {
    return undefined;
  }
}

function When({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={localTime(iso)}>
      {ago(iso)}
    </time>
  );
}

/**
 * The caller's own live API tokens (and those exchanged from them), newest first, each with
 * Revoke: asked first, then `tokens:revoke` (the token and its descendants), and the list
 * read again. Revoking the token this console uses signs it out, and the dialog says so.
 */
export function SessionsView() {
  const [version, setVersion] = useState(0);
  const [revoking, setRevoking] = useState<Session | undefined>(undefined);
  const mine = ownJti();
  const page = usePaged<Session>(
    (p) => listPage<Session>('/iam/v2beta1/tokens', 'tokens', p),
    [version],
  );
  return (
    <div>
      <h1>Sessions</h1>
      <Section id="sessions-h" title="Your live API tokens">
        <p class="hint">
          Tokens appear within about a second of their issue. Revoking one also revokes every token
          exchanged from it.
        </p>
        <PagedList paged={page} count={(d) => plural(d.totalCount, 'live token')}>
          {(d) => (
            <RowsTable labelledBy="sessions-h" headers={['Token', 'Identity', 'Expires', 'Action']}>
              {d.items.map((s) => (
                <tr key={s.jti} data-jti={s.jti}>
                  <td>
                    <Uid uid={s.jti} />
                    {s.jti === mine ? <strong> (this console)</strong> : null}
                    <div class="hint">
                      {s.scope ? `scope: ${s.scope.join(', ')}` : 'unrestricted'}
                    </div>
                    {s.parentJti ? (
                      <span class="hint">
                        {' '}
                        exchanged from <Uid uid={s.parentJti} />
                      </span>
                    ) : null}
                  </td>
                  <td>
                    <NameOf kind="identity" uid={s.identity} />
                    {s.actor ? (
                      <span class="hint">
                        {' '}
                        acted for by <NameOf kind="identity" uid={s.actor} />
                      </span>
                    ) : null}
                  </td>
                  <td>
                    <When iso={s.expireTime} />
                    <span class="hint">
                      {' '}
                      (issued <When iso={s.issueTime} />)
                    </span>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Revoke token ${s.jti}`}
                      onClick={() => setRevoking(s)}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </RowsTable>
          )}
        </PagedList>
      </Section>
      {revoking ? (
        <ConfirmDialog
          title="Revoke this token?"
          confirm="Yes, revoke"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await post('/iam/v2beta1/tokens:revoke', { jti: revoking.jti });
            setRevoking(undefined);
            setVersion((v) => v + 1);
          }}
        >
          Token {revoking.jti} and every token exchanged from it stop working at once.
          {revoking.jti === mine
            ? ' This is the token this console uses: you will be signed out.'
            : ''}
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
