import { useState } from 'preact/hooks';
import { listPage, post, type Page } from '../api';
import { myUid, usePermissionsAt, type CanAt } from '../can';
import { GroupPath } from '../group-path';
import { plural } from '../model';
import { go, href } from '../route';
import { Picker, usePicked } from '../picker';
import { PagedList, usePaged } from '../paged';
import { useName } from '../names';
import { ConfirmDialog, ErrorBox, Field, NameOf, Section, useAction } from '../ui';
import { ago, localTime } from '../time';
import { ReviewDialog, type AccessChange } from './access-delta';

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
  /**
   * The requester's and the role's paths as the server names them to this caller: where it
   * may list them, and, to one who may approve the request, from the organization down even
   * where it may not (docs/access-requests.md); absent otherwise.
   */
  requesterPath?: string;
  rolePath?: string;
}

const STATES = ['PENDING', 'APPROVED', 'DENIED', 'CANCELLED', 'EXPIRED', ''];

/** "8 hours", "2 days", "90 seconds": the largest unit that divides the duration. */
function duration(seconds: number): string {
  for (const [unit, n] of [
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ] as const)
    if (seconds >= n && seconds % n === 0) return plural(seconds / n, unit);
  return plural(seconds, 'second');
}

/** What the caller may do with one request: decide it, cancel it, or nothing. */
type Offer = 'decide' | 'cancel' | undefined;

/**
 * Approve and Deny where the caller holds `role_bindings.create` at the request's group
 * and is not its requester (nobody decides their own); Cancel on the caller's own pending
 * request; nothing to anyone else. The server decides again on every call.
 */
function offerFor(r: AccessRequest, me: string | undefined, can: CanAt): Offer {
  if (r.state !== 'PENDING') return undefined;
  if (me !== undefined && r.requesterUid === me) return 'cancel';
  return can('role_bindings.create', r.groupUid) ? 'decide' : undefined;
}

/**
 * The binding approving `r` would make, as `access:simulate` takes it: it starts at the
 * approval (now) or at the request's `notBefore` when later, and lasts `durationSeconds`
 * (docs/access-requests.md). Worked out once, when Approve is pressed, so the reviewed
 * change does not move while the dialog is open.
 */
function bindingOf(r: AccessRequest): AccessChange {
  const now = Date.now();
  const from = r.notBefore !== undefined ? Date.parse(r.notBefore) : NaN;
  const start = from > now ? from : now;
  return {
    createRoleBinding: {
      groupUid: r.groupUid,
      identityUid: r.requesterUid,
      roleUid: r.roleUid,
      ...(from > now ? { notBefore: new Date(from).toISOString() } : {}),
      expireTime: new Date(start + r.durationSeconds * 1000).toISOString(),
    },
  };
}

/**
 * The requester or the role of a request: by name (a link, for an identity) where the
 * caller may read it; else by the path the request's answer names it with (a folder's
 * owner deciding for an identity of the organization reads `acme/alice`, and no link to a
 * page it may not open); else by uid.
 */
function Named(props: { kind: 'identity' | 'role'; uid: string; path: string | undefined }) {
  const name = useName(props.kind, props.uid);
  if (name === undefined)
    return props.path ? (
      <span class="name" title={props.uid}>
        {props.path}
      </span>
    ) : (
      <code class="uid small">{props.uid}</code>
    );
  const body = (
    <span class="name" title={props.uid}>
      {name}
    </span>
  );
  return props.kind === 'identity' ? <a href={href('identity', props.uid)}>{body}</a> : body;
}

const Requester = ({ r }: { r: AccessRequest }) => (
  <Named kind="identity" uid={r.requesterUid} path={r.requesterPath} />
);
const Role = ({ r }: { r: AccessRequest }) => (
  <Named kind="role" uid={r.roleUid} path={r.rolePath} />
);

/** "alice … role editor at acme / payments": one request's what, by names. */
function What({ r }: { r: AccessRequest }) {
  return (
    <>
      <Requester r={r} /> the role <Role r={r} /> at <GroupPath uid={r.groupUid} />
    </>
  );
}

/**
 * What an approval did, kept above the list so it outlives the reload that drops the
 * request from the pending inbox: the binding made, or how many approvals stand so far.
 */
function Decided({ r }: { r: AccessRequest }) {
  return (
    <p class="done" role="status">
      {r.state === 'APPROVED' ? (
        <>
          Approved: <Requester r={r} /> gets <Role r={r} /> at <GroupPath uid={r.groupUid} />.
        </>
      ) : (
        <>
          Approval recorded, {r.approvals.length} of {r.approvalsRequired}: the binding is made at
          the last one.
        </>
      )}
    </p>
  );
}

/**
 * Approve (with what it would do to access shown first), Deny or Cancel (each asked
 * first); a refusal is shown in place.
 */
function Actions(props: {
  r: AccessRequest;
  offer: Offer;
  reload: () => void;
  onApproved: (r: AccessRequest) => void;
}) {
  const { r, offer, reload } = props;
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState<'deny' | 'cancel' | undefined>(undefined);
  // The binding under review, frozen when Approve is pressed.
  const [approving, setApproving] = useState<AccessChange | undefined>(undefined);
  if (offer === undefined) return null;
  const send = async (verb: 'approve' | 'deny' | 'cancel') => {
    const answer = await post<AccessRequest>(`/iam/v2beta1/accessRequests:${verb}`, {
      uid: r.uid,
      reason,
    });
    if (verb === 'approve') props.onApproved(answer);
    reload();
  };
  const left = r.approvalsRequired - r.approvals.length;
  return (
    <div class="decide">
      <label class="field">
        <span>Reason</span>
        <input
          name={`reason-${r.uid}`}
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
      </label>{' '}
      {offer === 'decide' ? (
        <>
          <button type="button" onClick={() => setApproving(bindingOf(r))}>
            Approve
          </button>{' '}
          <button type="button" class="danger" onClick={() => setAsking('deny')}>
            Deny
          </button>
        </>
      ) : (
        <button type="button" class="danger" onClick={() => setAsking('cancel')}>
          Cancel request
        </button>
      )}
      {approving ? (
        <ReviewDialog
          title="Approve this request?"
          confirm="Yes, approve"
          tone="primary"
          changes={[approving]}
          known={r.requesterPath ? { [r.requesterUid]: r.requesterPath } : {}}
          onClose={() => setApproving(undefined)}
          onConfirm={async () => {
            await send('approve');
            setApproving(undefined);
          }}
        >
          Approving grants <What r={r} /> and everything below it, for {duration(r.durationSeconds)}{' '}
          from{' '}
          {r.notBefore && Date.parse(r.notBefore) > Date.now()
            ? localTime(r.notBefore)
            : 'the approval'}
          .
          {left > 1
            ? ` This is approval ${r.approvals.length + 1} of ${r.approvalsRequired}: the binding is made at the last one.`
            : ''}
        </ReviewDialog>
      ) : null}
      {asking ? (
        <ConfirmDialog
          title={asking === 'deny' ? 'Deny this request?' : 'Cancel your request?'}
          confirm={asking === 'deny' ? 'Yes, deny' : 'Yes, cancel it'}
          onClose={() => setAsking(undefined)}
          onConfirm={() => send(asking)}
        >
          {asking === 'deny' ? (
            <>
              Denying refuses <What r={r} />: the request is closed as denied and no binding is
              made. The requester can ask again.
            </>
          ) : (
            'Your request is closed; nobody can approve it any more. You can ask again.'
          )}
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

/** One request, by names: who asks for which role where, for how long, and why. */
function RequestItem(props: {
  r: AccessRequest;
  me: string | undefined;
  can: CanAt | undefined;
  reload: () => void;
  onApproved: (r: AccessRequest) => void;
}) {
  const { r, me } = props;
  const mine = me !== undefined && r.requesterUid === me;
  return (
    <li class="request">
      <p>
        <strong class="state">{r.state.toLowerCase()}</strong>{' '}
        {mine ? (
          'You ask'
        ) : (
          <>
            <Requester r={r} /> asks
          </>
        )}{' '}
        for role <Role r={r} /> at <GroupPath uid={r.groupUid} /> for {duration(r.durationSeconds)}
        {r.notBefore ? <> from {localTime(r.notBefore)}</> : null}
      </p>
      {r.reason ? <blockquote class="reason">{r.reason}</blockquote> : null}
      <p class="count">
        {r.approvals.length} of {plural(r.approvalsRequired, 'approval')}
        {r.approvals.length > 0 ? (
          <>
            {' '}
            (by{' '}
            {r.approvals.map((a, i) => (
              <span key={a.approver}>
                {i > 0 ? ', ' : null}
                {a.approver === 'admin' ? (
                  'the admin token'
                ) : (
                  <NameOf kind="identity" uid={a.approver} />
                )}
              </span>
            ))}
            )
          </>
        ) : null}
        ; asked {ago(r.createTime)}
        {r.state === 'PENDING' ? <>; times out {localTime(r.timeoutTime)}</> : null}
        {r.bindingUid ? '; the binding is made' : null}
      </p>
      {props.can ? (
        <Actions
          r={r}
          offer={offerFor(r, me, props.can)}
          reload={props.reload}
          onApproved={props.onApproved}
        />
      ) : null}
    </li>
  );
}

/** One page of requests and the one batch check that decides what is offered on it. */
function RequestList(props: {
  page: Page<AccessRequest>;
  reload: () => void;
  onApproved: (r: AccessRequest) => void;
}) {
  const { page } = props;
  const me = myUid();
  const can = usePermissionsAt(
    page.items
      .filter((r) => r.state === 'PENDING' && r.requesterUid !== me)
      .map((r) => ({ capability: 'role_bindings.create', groupUid: r.groupUid })),
  );
  return (
    <ul class="requests" aria-labelledby="requests-h">
      {page.items.map((r) => (
        <RequestItem
          key={r.uid}
          r={r}
          me={me}
          can={can}
          reload={props.reload}
          onApproved={props.onApproved}
        />
      ))}
    </ul>
  );
}

const DURATIONS: Array<[string, number]> = [
  ['1 hour', 3_600],
  ['8 hours', 8 * 3_600],
  ['1 day', 86_400],
  ['7 days', 7 * 86_400],
  ['30 days', 30 * 86_400],
];

/**
 * Ask for a role at a group, for a while, with a reason: both picked by name. Offered to
 * identities only (the admin token is no one who could ask); the requester is always the
 * caller, which the server sets itself.
 */
function Ask({ onAsked }: { onAsked: () => void }) {
  const [group, setGroup] = usePicked('group', '');
  const [role, setRole] = usePicked('role', '');
  const [seconds, setSeconds] = useState(8 * 3_600);
  const [reason, setReason] = useState('');
  const act = useAction();
  const [asked, setAsked] = useState(false);
  return (
    <Section id="ask-h" title="Ask for a role">
      <form
        class="inline-form"
        aria-labelledby="ask-h"
        onSubmit={(e) => {
          e.preventDefault();
          if (!group || !role) return;
          setAsked(false);
          void act.run(async () => {
            await post(`/iam/v2beta1/accessRequests/${group.uid}`, {
              roleUid: role.uid,
              durationSeconds: seconds,
              reason,
            });
            setAsked(true);
            onAsked();
          });
        }}
      >
        <Picker
          kind="group"
          label="At group"
          name="ask-group"
          value={group}
          onPick={setGroup}
          required
        />
        <Picker kind="role" label="Role" name="ask-role" value={role} onPick={setRole} required />
        <label class="field">
          <span>For</span>
          <select
            name="ask-duration"
            value={String(seconds)}
            onChange={(e) => setSeconds(Number((e.currentTarget as HTMLSelectElement).value))}
          >
            {DURATIONS.map(([label, n]) => (
              <option key={n} value={String(n)}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <Field label="Why" name="ask-reason" value={reason} onInput={setReason} required />
        <button type="submit" disabled={act.busy || !group || !role}>
          Ask
        </button>
        <ErrorBox error={act.error} />
        {asked ? <p role="status">Asked: your request waits for its approvers.</p> : null}
      </form>
    </Section>
  );
}

/**
 * The access requests inbox (docs/access-requests.md): the requests the caller may see,
 * by state (default PENDING: an approver's inbox), by names. What each offers is decided
 * by one batch check per page; the server decides again and a refusal is shown as worded.
 */
export function RequestsView({ query }: { query: URLSearchParams }) {
  const state = query.get('state') ?? 'PENDING';
  // The last approval made here, shown until another or until the view is left.
  const [approved, setApproved] = useState<AccessRequest | undefined>(undefined);
  const page = usePaged<AccessRequest>(
    (p) =>
      listPage('/iam/v2beta1/accessRequests', 'accessRequests', {
        state: state === 'all' ? undefined : state,
        ...p,
      }),
    [state],
  );
  return (
    <div>
      <h1>Access requests</h1>
      <nav aria-label="States" class="tabs">
        <ul>
          {STATES.map((s) => (
            <li key={s || 'all'}>
              <a
                href={href('requests', '', { state: s || 'all' })}
                aria-current={state === (s || 'all') ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  go(href('requests', '', { state: s || 'all' }));
                }}
              >
                {s ? s.toLowerCase() : 'all'}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <Section
        id="requests-h"
        title={
          state === 'all'
            ? 'Every request'
            : `${state.toLowerCase()[0]?.toUpperCase()}${state.toLowerCase().slice(1)}`
        }
      >
        {approved ? <Decided r={approved} /> : null}
        <PagedList paged={page} announce count={(d) => plural(d.totalCount, 'request')}>
          {(d) => <RequestList page={d} reload={page.reload} onApproved={setApproved} />}
        </PagedList>
      </Section>
      {myUid() !== undefined ? <Ask onAsked={page.reload} /> : null}
    </div>
  );
}
