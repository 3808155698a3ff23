import { useState } from 'preact/hooks';
import { listPage, post } from '../api';
import type { Identity, Role } from '../model';
import { ErrorBox, Field, useAction, useLoad } from '../ui';

/** The create forms of the group page; each calls one create endpoint of the public API. */

export function Select(props: {
  label: string;
  name: string;
  value: string;
  options: Array<{ value: string; text: string }>;
  onChange: (v: string) => void;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <select
        name={props.name}
        value={props.value}
        onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}
      >
        <option value="">Choose…</option>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Bind a role here: an identity of this group (or any uid) and a role the caller can see. */
export function BindRole({ group, onBound }: { group: string; onBound: () => void }) {
  const choices = useLoad(
    () =>
      Promise.all([
        listPage<Identity>('/iam/v2beta1/identities', 'identities', {
          // An identity is bound only inside its own organization: offer the organization's.
          'uidp.descendants_of': group.split('/')[0],
          page_size: 100,
        }),
        listPage<Role>('/iam/v2beta1/roles', 'roles', { page_size: 100 }),
      ]),
    [group],
  );
  const [identityUid, setIdentity] = useState('');
  const [roleUid, setRole] = useState('');
  const act = useAction();
  const [ids, roles] = choices.data ?? [undefined, undefined];
  return (
    <form
      class="inline-form"
      aria-label="Bind a role"
      onSubmit={(e) => {
        e.preventDefault();
        void act.run(async () => {
          await post(`/iam/v2beta1/roleBindings/${group}`, { identityUid, roleUid });
          onBound();
        });
      }}
    >
      <h3>Bind a role</h3>
      <Select
        label="Identity"
        name="identity"
        value={identityUid}
        onChange={setIdentity}
        options={(ids?.items ?? []).map((i) => ({ value: i.uid, text: i.name }))}
      />
      <Select
        label="Role"
        name="role"
        value={roleUid}
        onChange={setRole}
        options={(roles?.items ?? []).map((r) => ({ value: r.uid, text: r.name }))}
      />
      <button type="submit" disabled={act.busy || !identityUid || !roleUid}>
        Bind
      </button>
      <ErrorBox error={choices.error} />
      <ErrorBox error={act.error} />
    </form>
  );
}

export function CreateRepo({ group, onCreated }: { group: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const act = useAction();
  return (
    <form
      class="inline-form"
      aria-label="Create a repo"
      onSubmit={(e) => {
        e.preventDefault();
        void act.run(async () => {
          await post(`/registry/v2beta1/repos/${group}`, { name });
          setName('');
          onCreated();
        });
      }}
    >
      <Field label="Repo name" name="repo" value={name} onInput={setName} required />
      <button type="submit" disabled={act.busy}>
        Create repo
      </button>
      <ErrorBox error={act.error} />
    </form>
  );
}

export function CreateSubscription({ group, onCreated }: { group: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [sink, setSink] = useState('');
  const act = useAction();
  return (
    <form
      class="inline-form"
      aria-label="Create an event subscription"
      onSubmit={(e) => {
        e.preventDefault();
        void act.run(async () => {
          await post(`/events/v2beta1/subscriptions/${group}`, { name, sink });
          setName('');
          setSink('');
          onCreated();
        });
      }}
    >
      <Field
        label="Subscription name"
        name="subscription"
        value={name}
        onInput={setName}
        required
      />
      <Field label="Sink URL" name="sink" value={sink} onInput={setSink} required />
      <button type="submit" disabled={act.busy}>
        Subscribe
      </button>
      <ErrorBox error={act.error} />
    </form>
  );
}

export function CreateProvider({ group, onCreated }: { group: string; onCreated: () => void }) {
  const roles = useLoad(
    () => listPage<Role>('/iam/v2beta1/roles', 'roles', { page_size: 100 }),
    [],
  );
  const [name, setName] = useState('');
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [defaultRole, setDefaultRole] = useState('');
  const act = useAction();
  return (
    <form
      class="inline-form"
      aria-label="Create an identity provider"
      onSubmit={(e) => {
        e.preventDefault();
        void act.run(async () => {
          await post(`/iam/v2beta1/identityProviders/${group}`, {
            name,
            defaultRole,
            oidc: { issuer, clientId },
          });
          setName('');
          onCreated();
        });
      }}
    >
      <Field label="Provider name" name="idp-name" value={name} onInput={setName} required />
      <Field label="OIDC issuer" name="idp-issuer" value={issuer} onInput={setIssuer} required />
      <Field label="Client id" name="idp-client" value={clientId} onInput={setClientId} required />
      <Select
        label="Default role"
        name="idp-role"
        value={defaultRole}
        onChange={setDefaultRole}
        options={(roles.data?.items ?? []).map((r) => ({ value: r.uid, text: r.name }))}
      />
      <button type="submit" disabled={act.busy || !defaultRole}>
        Add provider
      </button>
      <ErrorBox error={act.error} />
    </form>
  );
}

export function CreateInvite({ group, onCreated }: { group: string; onCreated: () => void }) {
  const roles = useLoad(
    () => listPage<Role>('/iam/v2beta1/roles', 'roles', { page_size: 100 }),
    [],
  );
  const [roleUid, setRole] = useState('');
  const [code, setCode] = useState('');
  const act = useAction();
  return (
    <form
      class="inline-form"
      aria-label="Create an invite"
      onSubmit={(e) => {
        e.preventDefault();
        void act.run(async () => {
          const got = await post<{ code?: string }>(`/iam/v2beta1/groupInvites/${group}`, {
            roleUid,
            ttl: '86400s',
          });
          setCode(got.code ?? '');
          onCreated();
        });
      }}
    >
      <Select
        label="Invite with role"
        name="invite-role"
        value={roleUid}
        onChange={setRole}
        options={(roles.data?.items ?? []).map((r) => ({ value: r.uid, text: r.name }))}
      />
      <button type="submit" disabled={act.busy || !roleUid}>
        Create invite (one day)
      </button>
      {code ? (
        <p>
          Invite code (shown once): <code>{code}</code>
        </p>
      ) : null}
      <ErrorBox error={act.error} />
    </form>
  );
}
