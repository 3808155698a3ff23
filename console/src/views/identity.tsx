import { get, listPage } from '../api';
import { isAdminToken, usePermissions } from '../can';
import { GroupPath } from '../group-path';
import { parentOf, plural, type Identity, type RoleBinding } from '../model';
import { href } from '../route';
import { PagedList, RowsTable, usePaged } from '../paged';
import { CopyUid, ErrorBox, Section, useLoad } from '../ui';
import { Timeline } from './audit';
import { ClaimTester } from './claim-tester';
import { BindingWindow } from '../binding-window';
import { ConditionLine } from '../condition';
import { ago, localTime } from '../time';

interface IdentityRead extends Identity {
  lastSeenTime?: string;
  createTime?: string;
}

const AUDIT = ['audit.list'] as const;

/**
 * Whether it ever signed in: lastSeenTime starts as the identity's createTime and moves
 * only when it authenticates (an STS exchange).
 */
export function signedIn(i: { lastSeenTime?: string; createTime?: string }): boolean {
  return i.lastSeenTime !== undefined && i.lastSeenTime !== i.createTime;
}

/** An instant in local time, with how long ago in its title. */
export function When({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={ago(iso)}>
      {localTime(iso)}
    </time>
  );
}

/**
 * One identity (`#/identity/<uid>`): where it hangs, when it last signed in, the role
 * bindings of it the caller may list (at any group), and its audit trail where the caller
 * may read the audit at the identity's group. Every part is a read of the public API with
 * the caller's own token: what it may not see is left out, and said to be.
 */
export function IdentityView({ uid }: { uid: string }) {
  const identity = useLoad(() => get<IdentityRead>(`/iam/v2beta1/identities/${uid}`), [uid]);
  const i = identity.data?.uid === uid ? identity.data : undefined;
  if (!uid)
    return (
      <p>
        Choose an identity in the <a href={href('identities')}>list of identities</a>.
      </p>
    );
  return (
    <div>
      <h1 tabIndex={-1} aria-busy={i || identity.error ? undefined : 'true'}>
        {i ? i.name : identity.error ? 'Identity' : 'Loading…'}
      </h1>
      <ErrorBox error={identity.error} />
      {i ? <About identity={i} /> : null}
      {i ? <Bindings uid={uid} /> : null}
      {/* A claim-match identity: would a token's claims assume it, and its conditions hold? */}
      {i?.claimMatch ? <ClaimTester identityUid={uid} /> : null}
      {i ? <AuditTrail identity={i} /> : null}
    </div>
  );
}

function About({ identity: i }: { identity: IdentityRead }) {
  const group = parentOf(i.uid);
  const m = i.claimMatch;
  return (
    <Section id="about-h" title="About">
      <dl class="facts">
        <dt>Group</dt>
        <dd>{group ? <GroupPath uid={group} /> : 'none (a person’s own identity)'}</dd>
        {i.description ? (
          <>
            <dt>Description</dt>
            <dd>{i.description}</dd>
          </>
        ) : null}
        <dt>Last signed in</dt>
        <dd class="last-seen">
          {signedIn(i) ? (
            <>
              <When iso={i.lastSeenTime!} /> ({ago(i.lastSeenTime!)})
            </>
          ) : (
            'never'
          )}
        </dd>
        {m?.issuer || m?.issuerPattern ? (
          <>
            <dt>Issuer</dt>
            <dd>
              <code>{m.issuer ?? m.issuerPattern}</code>
            </dd>
          </>
        ) : null}
        {m?.subject || m?.subjectPattern ? (
          <>
            <dt>Subject</dt>
            <dd>
              <code>{m.subject ?? m.subjectPattern}</code>
            </dd>
          </>
        ) : null}
        <dt>Uid</dt>
        <dd>
          <CopyUid uid={i.uid} label={i.name} />
        </dd>
      </dl>
      <p>
        <a href={href('access', '', { identity: i.uid })}>What {i.name} can do</a>
      </p>
    </Section>
  );
}

/** Its role bindings at every group where the caller may list them, 50 a page. */
function Bindings({ uid }: { uid: string }) {
  const page = usePaged<RoleBinding>(
    (p) => listPage('/iam/v2beta1/roleBindings', 'roleBindings', { identity: uid, ...p }),
    [uid],
  );
  return (
    <Section id="identity-bindings-h" title="Role bindings">
      <p class="hint">Only bindings at groups where you may list role bindings are shown.</p>
      <PagedList paged={page} count={(d) => plural(d.totalCount, 'role binding')}>
        {(d) => (
          <RowsTable labelledBy="identity-bindings-h" headers={['Role', 'Group', 'Window']}>
            {d.items.map((b) => (
              <tr key={b.uid} data-uid={b.uid}>
                <td>
                  <a href={href('roles', '', { name: b.role.name || undefined })}>
                    {b.role.name || b.role.uid}
                  </a>
                  <ConditionLine condition={b.condition} />
                </td>
                <td>
                  <GroupPath uid={b.group.uid} />
                </td>
                <td>
                  <BindingWindow b={b} />
                </td>
              </tr>
            ))}
          </RowsTable>
        )}
      </PagedList>
    </Section>
  );
}

/**
 * The changes made to it, where the caller may read the audit at its group (a person's own
 * identity hangs under no group: only the admin token is asked to read its trail here).
 */
function AuditTrail({ identity: i }: { identity: IdentityRead }) {
  const group = parentOf(i.uid) ?? '';
  const can = usePermissions(group, AUDIT);
  const readable = group ? can?.('audit.list') === true : isAdminToken();
  if (!readable) return null;
  return (
    <Section id="identity-audit-h" title="Audit trail">
      <p>
        <a href={href('audit', '', { actor: i.uid })}>What {i.name} changed</a>
      </p>
      <Timeline query={{ resource_uid: i.uid }} />
    </Section>
  );
}
