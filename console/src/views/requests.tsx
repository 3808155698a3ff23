import { useState } from 'preact/hooks';
import { listPage, post, type Page } from '../api';
import { go, href } from '../route';
import { ErrorBox, Pager, Section, Uid, useAction, useLoad } from '../ui';

interface AccessRequest {
  uid: string;
  groupUid: string;
  requesterUid: string;
  roleUid: string;
  reason: string;
  durationSeconds: number;
  notBefore?: string;
  state: string;
  approvalsRequired: number;
  approvals: Array<{ approver: string; time: string; reason: string }>;
  bindingUid?: string;
  timeoutTime: string;
  createTime: string;
}

const STATES = ['PENDING', 'APPROVED', 'DENIED', 'CANCELLED', 'EXPIRED', ''];

/** Approve or deny one request; the answer (or the refusal) is shown in place. */
function Decide({ r, reload }: { r: AccessRequest; reload: () => void }) {
  const action = useAction();
  const [reason, setReason] = useState('');
  const decide = (verb: 'approve' | 'deny') =>
    action.run(async () => {
      await post(`/iam/v2beta1/accessRequests:${verb}`, { uid: r.uid, reason });
      reload();
    });
  return (
    <div class="decide">
      <label>
        Reason{' '}
        <input
          name={`reason-${r.uid}`}
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
      </label>{' '}
      <button type="button" disabled={action.busy} onClick={() => void decide('approve')}>
        Approve
      </button>{' '}
      <button type="button" disabled={action.busy} onClick={() => void decide('deny')}>
        Deny
      </button>
      <ErrorBox error={action.error} />
    </div>
  );
}

/**
 * The access requests inbox (docs/access-requests.md): the requests the caller may see,
 * by state (default PENDING: an approver's inbox), with Approve and Deny. The server
 * decides who may approve; a refusal is shown as the API gives it.
 */
export function RequestsView({ query }: { query: URLSearchParams }) {
  const state = query.get('state') ?? 'PENDING';
  const [tokens, setTokens] = useState<string[]>([]);
  const [round, setRound] = useState(0);
  const token = tokens[tokens.length - 1];
  const page = useLoad<Page<AccessRequest>>(
    () =>
      listPage<AccessRequest>('/iam/v2beta1/accessRequests', 'accessRequests', {
        state: state === 'all' ? undefined : state,
        page_size: 50,
        page_token: token,
      }),
    [state, token, round],
  );
  return (
    <div>
      <h1>Access requests</h1>
      <nav aria-label="States">
        {STATES.map((s) => (
          <a
            key={s || 'all'}
            href={href('requests', '', { state: s || 'all' })}
            aria-current={state === (s || 'all') ? 'page' : undefined}
            onClick={(e) => {
              e.preventDefault();
              go(href('requests', '', { state: s || 'all' }));
            }}
          >
            {s ? s.toLowerCase() : 'all'}{' '}
          </a>
        ))}
      </nav>
      <Section id="requests-h" title={state === 'all' ? 'Every request' : `${state.toLowerCase()}`}>
        <ErrorBox error={page.error} />
        {page.data ? (
          <>
            <p class="count">{page.data.totalCount} requests</p>
            <ul class="requests">
              {page.data.items.map((r) => (
                <li key={r.uid}>
                  <strong>{r.state}</strong> <Uid uid={r.requesterUid} /> asks for role{' '}
                  <Uid uid={r.roleUid} /> at{' '}
                  <a href={href('group', r.groupUid)}>
                    <Uid uid={r.groupUid} />
                  </a>{' '}
                  for {r.durationSeconds}s{r.notBefore ? <> from {r.notBefore}</> : null}: “
                  {r.reason}” ({r.approvals.length}/{r.approvalsRequired} approvals; times out{' '}
                  {r.timeoutTime})
                  {r.bindingUid ? (
                    <>
                      {' '}
                      binding <Uid uid={r.bindingUid} />
                    </>
                  ) : null}
                  {r.state === 'PENDING' ? (
                    <Decide r={r} reload={() => setRound(round + 1)} />
                  ) : null}
                </li>
              ))}
            </ul>
            <Pager tokens={tokens} setTokens={setTokens} next={page.data.nextPageToken} />
          </>
        ) : null}
      </Section>
    </div>
  );
}
