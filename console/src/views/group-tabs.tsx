import { useState } from 'preact/hooks';
import { listPage } from '../api';
import { ConditionLine } from '../condition';
import { BindingWindow } from '../binding-window';
import { useCan } from '../can';
import type { Identity, Named, RoleBinding } from '../model';
import { plural } from '../model';
import { href } from '../route';
import { localTime } from '../time';
import { Section } from '../ui';
import { ChildrenTab } from './children';
import {
  BindRole,
  CreateInvite,
  CreateProvider,
  CreateRepo,
  CreateSubscription,
} from './group-forms';
import { KINDS, ListSection, type ListSectionProps } from './list-section';
import { ReviewsTab } from './reviews-tab';
import { RolesTab } from './roles-tab';

interface Tag {
  uid: string;
  name: string;
  digest: string;
}
interface Provider extends Named {
  oidc?: { issuer?: string; clientId?: string };
}
interface Invite {
  uid: string;
  role?: Named;
  roleUid?: string;
  email?: string;
  expirationTime?: string;
}
interface Subscription extends Named {
  sink: string;
  types?: string[];
}

export const TABS = [
  { id: 'children', label: 'Children' },
  { id: 'identities', label: 'Identities' },
  { id: 'bindings', label: 'Role bindings' },
  { id: 'roles', label: 'Roles' },
  { id: 'reviews', label: 'Reviews' },
  { id: 'registry', label: 'Registry' },
  { id: 'providers', label: 'Providers' },
  { id: 'invites', label: 'Invites' },
  { id: 'events', label: 'Events' },
  { id: 'audit', label: 'Audit' },
] as const;

export type TabId = (typeof TABS)[number]['id'];

/** The tab an address names; an unknown or missing one is the children. */
export function tabOf(id: string): (typeof TABS)[number] {
  return TABS.find((t) => t.id === id) ?? TABS[0];
}

interface TabProps {
  uid: string;
  name: string;
}

export function TabPanel({ tab, uid, name }: TabProps & { tab: TabId }) {
  const Panel = PANELS[tab];
  return (
    <div class="tab-panel">
      <Panel uid={uid} name={name} />
    </div>
  );
}

const here = (uid: string) => ({ 'uidp.children_of': uid });

/** An identity's role bindings go with it: the confirmation counts them. */
async function bindingsOf(i: Identity): Promise<string> {
  const p = await listPage('/iam/v2beta1/roleBindings', 'roleBindings', {
    identity: i.uid,
    page_size: 1,
  }).catch(() => undefined);
  if (p === undefined) return ' and any role bindings it holds';
  return p.totalCount === '0' ? '' : ` and its ${plural(p.totalCount, 'role binding')}`;
}

function IdentitiesTab({ uid }: TabProps) {
  const can = useCan();
  return (
    <ListSection<Identity>
      kind={KINDS.identities}
      query={here(uid)}
      consequence={bindingsOf}
      review={(i) => [{ deleteIdentity: { uid: i.uid } }]}
      columns={[
        { header: 'Name', cell: (i) => <a href={href('identity', i.uid)}>{i.name}</a> },
        { header: 'Description', cell: (i) => i.description },
        {
          header: 'Issuer',
          cell: (i) => (
            <code class="url">{i.claimMatch?.issuer ?? i.claimMatch?.issuerPattern}</code>
          ),
        },
        {
          header: 'Links',
          cell: (i) => (
            <>
              <a href={href('access', '', { identity: i.uid })} aria-label={`Access of ${i.name}`}>
                Access
              </a>
              {/* Only where the caller may read the audit: else it leads to "0 changes". */}
              {can('audit.list') ? (
                <>
                  {' '}
                  <a
                    href={href('audit', '', { resource: i.uid })}
                    aria-label={`Audit of ${i.name}`}
                  >
                    Audit
                  </a>
                </>
              ) : null}
            </>
          ),
        },
      ]}
    >
      {can('identity.create') ? (
        <p>
          <a href={href('builder', uid)}>New identity</a> (the identity builder tests its claims
          first)
        </p>
      ) : null}
    </ListSection>
  );
}

function BindingsTab({ uid, name }: TabProps) {
  const can = useCan();
  return (
    <ListSection<RoleBinding>
      kind={KINDS.roleBindings}
      query={here(uid)}
      label={(b) => `the binding of ${b.role.name} to ${b.identity.name}`}
      review={(b) => [{ deleteRoleBinding: { uid: b.uid } }]}
      columns={[
        {
          header: 'Identity',
          cell: (b) => (
            <a href={href('identity', b.identity.uid)}>{b.identity.name || b.identity.uid}</a>
          ),
        },
        // A conditional binding grants only where its condition holds: never shown as plain.
        {
          header: 'Role',
          cell: (b) => (
            <>
              {b.role.name || b.role.uid}
              <ConditionLine condition={b.condition} />
            </>
          ),
        },
        // "starts in 2 hours" / "expires in 3 days": a scheduled binding never looks live.
        { header: 'Window', cell: (b) => <BindingWindow b={b} /> },
        // Only where the caller may read the audit: else it leads to "0 changes".
        ...(can('audit.list')
          ? [
              {
                header: 'Links',
                cell: (b: RoleBinding) => (
                  <a
                    href={href('audit', '', { resource: b.uid })}
                    aria-label={`Audit of the binding of ${b.role.name} to ${b.identity.name}`}
                  >
                    Audit
                  </a>
                ),
              },
            ]
          : []),
      ]}
    >
      {(reload) =>
        can('role_bindings.create') ? (
          <BindRole
            group={uid}
            groupName={name}
            onBound={() => {
              reload();
              // The dialog that held the focus is gone: it goes to the list the binding joins.
              setTimeout(() => document.getElementById('bindings-h')?.focus(), 0);
            }}
          />
        ) : null
      }
    </ListSection>
  );
}

function RegistryTab({ uid }: TabProps) {
  const can = useCan();
  const [version, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);
  return (
    <>
      <ListSection<Named>
        kind={KINDS.repos}
        query={here(uid)}
        version={version}
        // Only an empty repo may go: the tags list below is read again after a delete.
        onDeleted={bump}
        consequence={() => Promise.resolve(' (only an empty repo can be deleted)')}
        columns={[
          { header: 'Name', cell: (r) => r.name },
          { header: 'Description', cell: (r) => r.description },
        ]}
      >
        {can('repo.create') ? <CreateRepo group={uid} onCreated={bump} /> : null}
      </ListSection>
      <ListSection<Tag>
        kind={KINDS.tags}
        title="Tags (in this group’s repos)"
        query={{ 'uidp.descendants_of': uid }}
        version={version}
        columns={[
          { header: 'Tag', cell: (t) => t.name },
          { header: 'Digest', cell: (t) => <code class="digest">{t.digest}</code> },
        ]}
      />
    </>
  );
}

/**
 * A tab that lists one kind of resource in the group and, where the caller may create one,
 * its form (a creation reloads the list): the providers, invites and event subscriptions.
 */
function listTab<T extends { uid: string }>(
  list: Omit<ListSectionProps<T>, 'query' | 'version' | 'children'>,
  createCap: string,
  Create: (p: { group: string; onCreated: () => void }) => preact.JSX.Element,
): (p: TabProps) => preact.JSX.Element {
  return function ListTab({ uid }: TabProps) {
    const can = useCan();
    return (
      <ListSection<T> {...list} query={here(uid)}>
        {(reload) => (can(createCap) ? <Create group={uid} onCreated={reload} /> : null)}
      </ListSection>
    );
  };
}

const ProvidersTab = listTab<Provider>(
  {
    kind: KINDS.providers,
    columns: [
      { header: 'Name', cell: (p) => p.name },
      { header: 'Issuer', cell: (p) => p.oidc?.issuer ?? '' },
      { header: 'Client', cell: (p) => p.oidc?.clientId ?? '' },
    ],
  },
  'identity_providers.create',
  CreateProvider,
);

const InvitesTab = listTab<Invite>(
  {
    kind: KINDS.invites,
    label: (i) => `the invite with role ${i.role?.name ?? ''}${i.email ? ` for ${i.email}` : ''}`,
    columns: [
      { header: 'Role', cell: (i) => i.role?.name ?? i.roleUid ?? '' },
      { header: 'Email', cell: (i) => i.email ?? 'anyone with the code' },
      { header: 'Expires', cell: (i) => localTime(i.expirationTime) },
    ],
  },
  'group_invites.create',
  CreateInvite,
);

const EventsTab = listTab<Subscription>(
  {
    kind: KINDS.subscriptions,
    title: 'Event subscriptions',
    columns: [
      { header: 'Name', cell: (s) => s.name },
      { header: 'Sink', cell: (s) => <code class="url">{s.sink}</code> },
      { header: 'Types', cell: (s) => (s.types ?? ['*']).join(', ') },
    ],
  },
  'subscriptions.create',
  CreateSubscription,
);

/** The audit trail is its own view; this tab says what it holds and leads there. */
function AuditTab({ uid, name }: TabProps) {
  const can = useCan();
  return (
    <Section id="audit-h" title="Audit">
      {can('audit.list') ? (
        <p>
          <a href={href('audit', '', { group: uid })}>
            The audit timeline of {name || 'this group'} and everything below it
          </a>
        </p>
      ) : (
        <p class="count cannot">You cannot read the audit trail here.</p>
      )}
    </Section>
  );
}

/** Defined last: the list tabs above are constants, not hoisted functions. */
const PANELS: Record<TabId, (p: TabProps) => preact.JSX.Element> = {
  children: ({ uid }) => <ChildrenTab uid={uid} />,
  identities: IdentitiesTab,
  bindings: BindingsTab,
  roles: RolesTab,
  reviews: ({ uid }) => <ReviewsTab uid={uid} />,
  registry: RegistryTab,
  providers: ProvidersTab,
  invites: InvitesTab,
  events: EventsTab,
  audit: AuditTab,
};
