import { useState } from 'preact/hooks';
import { get } from '../api';
import type { Group, Identity, Named, RoleBinding } from '../model';
import { href } from '../route';
import { ErrorBox, Uid, useLoad } from '../ui';
import {
  BindRole,
  CreateInvite,
  CreateProvider,
  CreateRepo,
  CreateSubscription,
} from './group-forms';
import { ListSection } from './list-section';

type Repo = Named;
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

/** Everything that hangs directly under one group, each list with its own create form. */
export function GroupView({ uid }: { uid: string }) {
  const group = useLoad(() => get<Group>(`/iam/v2beta1/groups/${uid}`), [uid]);
  const [version, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);
  const here = { 'uidp.children_of': uid };
  if (!uid)
    return (
      <p>
        Choose a group in the <a href={href('tree')}>tree</a>.
      </p>
    );
  return (
    <div>
      <h1>{group.data?.uid === uid ? group.data.name : uid}</h1>
      <ErrorBox error={group.error} />
      <p class="meta">
        <span class="description">{group.data?.uid === uid ? group.data.description : ''}</span>{' '}
        <Uid uid={uid} /> <a href={href('tree', uid)}>In the tree</a>{' '}
        <a href={href('audit', '', { group: uid })}>Audit</a>{' '}
        <a href={href('builder', uid)}>New identity</a>
      </p>
      <ListSection<Identity>
        id="identities-h"
        title="Identities"
        path="/iam/v2beta1/identities"
        plural="identities"
        query={here}
        version={version}
        // Its role bindings go with it: the bindings panel below must not keep showing them.
        onDeleted={bump}
        label={(i) => `identity ${i.name}`}
        columns={[
          { header: 'Name', cell: (i) => i.name },
          { header: 'Description', cell: (i) => i.description },
          {
            header: 'Issuer',
            cell: (i) => i.claimMatch?.issuer ?? i.claimMatch?.issuerPattern ?? '',
          },
          {
            header: 'Links',
            cell: (i) => (
              <>
                <a
                  href={href('access', '', { identity: i.uid })}
                  aria-label={`Access of ${i.name}`}
                >
                  Access
                </a>{' '}
                <a href={href('audit', '', { resource: i.uid })} aria-label={`Audit of ${i.name}`}>
                  Audit
                </a>
              </>
            ),
          },
        ]}
      />
      <ListSection<RoleBinding>
        id="bindings-h"
        title="Role bindings"
        path="/iam/v2beta1/roleBindings"
        plural="roleBindings"
        query={here}
        version={version}
        label={(b) => `binding of ${b.role.name} to ${b.identity.name}`}
        columns={[
          { header: 'Identity', cell: (b) => b.identity.name || b.identity.uid },
          { header: 'Role', cell: (b) => b.role.name || b.role.uid },
          { header: 'Expires', cell: (b) => b.expireTime ?? 'never' },
          {
            header: 'Links',
            cell: (b) => (
              <a
                href={href('audit', '', { resource: b.uid })}
                aria-label={`Audit of binding ${b.uid}`}
              >
                Audit
              </a>
            ),
          },
        ]}
      >
        <BindRole group={uid} onBound={bump} />
      </ListSection>
      <ListSection<Repo>
        id="repos-h"
        title="Repos"
        path="/registry/v2beta1/repos"
        plural="repos"
        query={here}
        version={version}
        label={(r) => `repo ${r.name}`}
        columns={[
          { header: 'Name', cell: (r) => r.name },
          { header: 'Description', cell: (r) => r.description },
        ]}
      >
        <CreateRepo group={uid} onCreated={bump} />
      </ListSection>
      <ListSection<Tag>
        id="tags-h"
        title="Tags (in this group’s repos)"
        path="/registry/v2beta1/tags"
        plural="tags"
        query={{ 'uidp.descendants_of': uid }}
        version={version}
        label={(t) => `tag ${t.name}`}
        columns={[
          { header: 'Tag', cell: (t) => t.name },
          { header: 'Digest', cell: (t) => <code>{t.digest}</code> },
        ]}
      />
      <ListSection<Provider>
        id="idps-h"
        title="Identity providers"
        path="/iam/v2beta1/identityProviders"
        plural="identityProviders"
        query={here}
        version={version}
        label={(p) => `identity provider ${p.name}`}
        columns={[
          { header: 'Name', cell: (p) => p.name },
          { header: 'Issuer', cell: (p) => p.oidc?.issuer ?? '' },
          { header: 'Client', cell: (p) => p.oidc?.clientId ?? '' },
        ]}
      >
        <CreateProvider group={uid} onCreated={bump} />
      </ListSection>
      <ListSection<Invite>
        id="invites-h"
        title="Invites"
        path="/iam/v2beta1/groupInvites"
        plural="groupInvites"
        query={here}
        version={version}
        label={(i) => `invite ${i.uid}`}
        columns={[
          { header: 'Role', cell: (i) => i.role?.name ?? i.roleUid ?? '' },
          { header: 'Email', cell: (i) => i.email ?? 'anyone with the code' },
          { header: 'Expires', cell: (i) => i.expirationTime ?? '' },
        ]}
      >
        <CreateInvite group={uid} onCreated={bump} />
      </ListSection>
      <ListSection<Subscription>
        id="subs-h"
        title="Event subscriptions"
        path="/events/v2beta1/subscriptions"
        plural="subscriptions"
        query={here}
        version={version}
        label={(s) => `subscription ${s.name}`}
        columns={[
          { header: 'Name', cell: (s) => s.name },
          { header: 'Sink', cell: (s) => s.sink },
          { header: 'Types', cell: (s) => (s.types ?? ['*']).join(', ') },
        ]}
      >
        <CreateSubscription group={uid} onCreated={bump} />
      </ListSection>
    </div>
  );
}
