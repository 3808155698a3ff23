import { useState } from 'preact/hooks';
import { listPage, post } from '../api';
import type { Role } from '../model';
import { Picker, type Picked } from '../picker';
import { fromLocalInput, windowSpan } from '../time';
import { ConditionText, type BindingCondition } from '../condition';
import { ErrorBox, Field, useAction, useLoad } from '../ui';
import { ReviewDialog } from './access-delta';

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

/**
 * Bind a role here: an identity of this organization and a role, each chosen by name with
 * type-ahead (no uid typed or pasted). _Bind_ first shows what the binding would do to
 * access (`access:simulate`); only _Yes, bind_ writes it, with the very values reviewed.
 */
export function BindRole(props: { group: string; groupName: string; onBound: () => void }) {
  const { group, groupName } = props;
  const [identity, setIdentity] = useState<Picked | undefined>(undefined);
  const [role, setRole] = useState<Picked | undefined>(undefined);
  // Local wall-clock times as typed (datetime-local), sent as instants; empty: from now, never.
  const [starts, setStarts] = useState('');
  const [expires, setExpires] = useState('');
  // An optional condition (docs/api.md, "Conditional role bindings"): sent only when an
  // expression is typed; the server checks it and names the position of any fault.
  const [condition, setCondition] = useState<BindingCondition>({ expression: '' });
  const notBefore = fromLocalInput(starts);
  const expireTime = fromLocalInput(expires);
  // The binding under review, frozen when Bind is pressed: what is reviewed is what is made.
  const [reviewing, setReviewing] = useState<Binding | undefined>(undefined);
  return (
    <>
      <form
        class="inline-form"
        aria-label="Bind a role"
        onSubmit={(e) => {
          e.preventDefault();
          if (identity && role)
            setReviewing({
              groupUid: group,
              identity,
              role,
              ...(notBefore ? { notBefore } : {}),
              ...(expireTime ? { expireTime } : {}),
              ...(condition.expression.trim() ? { condition: conditionBody(condition) } : {}),
            });
        }}
      >
        <h3>Bind a role</h3>
        <Picker
          kind="identity"
          label="Identity"
          name="identity"
          // An identity is bound only inside its own organization: offer the organization's.
          under={group.split('/')[0]}
          value={identity}
          onPick={setIdentity}
          required
        />
        <Picker kind="role" label="Role" name="role" value={role} onPick={setRole} required />
        <LocalTime label="Starts (optional)" name="notBefore" value={starts} onInput={setStarts} />
        <LocalTime
          label="Expires (optional)"
          name="expireTime"
          value={expires}
          onInput={setExpires}
        />
        <ConditionFields value={condition} onChange={setCondition} />
        <button type="submit" disabled={!identity || !role}>
          Bind
        </button>
      </form>
      {reviewing ? (
        <ReviewDialog
          title={`Bind ${reviewing.role.name} to ${reviewing.identity.name}?`}
          confirm="Yes, bind"
          tone="primary"
          changes={[
            {
              createRoleBinding: {
                groupUid: reviewing.groupUid,
                identityUid: reviewing.identity.uid,
                roleUid: reviewing.role.uid,
                ...(reviewing.expireTime ? { expireTime: reviewing.expireTime } : {}),
              },
            },
          ]}
          onClose={() => setReviewing(undefined)}
          onConfirm={async () => {
            await post(`/iam/v2beta1/roleBindings/${reviewing.groupUid}`, {
              identityUid: reviewing.identity.uid,
              roleUid: reviewing.role.uid,
              ...(reviewing.notBefore ? { notBefore: reviewing.notBefore } : {}),
              ...(reviewing.expireTime ? { expireTime: reviewing.expireTime } : {}),
              ...(reviewing.condition ? { condition: reviewing.condition } : {}),
            });
            setReviewing(undefined);
            setCondition({ expression: '' });
            setIdentity(undefined);
            setRole(undefined);
            setStarts('');
            setExpires('');
            props.onBound();
          }}
        >
          This binds the role {reviewing.role.name} to {reviewing.identity.name} in{' '}
          {groupName || 'this group'} and everything below it
          {reviewing.notBefore || reviewing.expireTime ? `, ${windowSpan(reviewing)}` : ''}.
          {reviewing.notBefore ? ' Until it starts it grants nothing.' : ''}
          <ConditionNote condition={reviewing.condition} />
        </ReviewDialog>
      ) : null}
    </>
  );
}

interface Binding {
  groupUid: string;
  identity: Picked;
  role: Picked;
  notBefore?: string;
  expireTime?: string;
  condition?: BindingCondition;
}

/** What the review says of a conditional binding; nothing for an unconditional one. */
function ConditionNote({ condition }: { condition: BindingCondition | undefined }) {
  if (!condition) return null;
  return (
    <>
      {' '}
      It grants only where its condition holds: <ConditionText condition={condition} />. The preview
      below counts it as if it always held.
    </>
  );
}

/** The condition as the create takes it: the expression as typed, empty title/description left out. */
function conditionBody(c: BindingCondition): BindingCondition {
  return {
    expression: c.expression,
    ...(c.title?.trim() ? { title: c.title.trim() } : {}),
    ...(c.description?.trim() ? { description: c.description.trim() } : {}),
  };
}

/**
 * A binding's optional condition, folded away until wanted: its expression (CEL, checked by
 * the server at create), a title and a description for people. The Conditions view tests one.
 */
function ConditionFields(props: {
  value: BindingCondition;
  onChange: (c: BindingCondition) => void;
}) {
  const { value, onChange } = props;
  return (
    <details class="condition-fields">
      <summary>Condition (optional)</summary>
      <label class="field">
        <span>Expression (CEL)</span>
        <textarea
          name="conditionExpression"
          rows={2}
          spellcheck={false}
          maxLength={1000}
          value={value.expression}
          placeholder='request.time.getHours("Europe/Berlin") < 18'
          onInput={(e) =>
            onChange({ ...value, expression: (e.currentTarget as HTMLTextAreaElement).value })
          }
        />
      </label>
      <Field
        label="Condition title"
        name="conditionTitle"
        value={value.title ?? ''}
        onInput={(title) => onChange({ ...value, title })}
      />
      <Field
        label="Condition description"
        name="conditionDescription"
        value={value.description ?? ''}
        onInput={(description) => onChange({ ...value, description })}
      />
      <p class="hint">
        <a href="#/conditions">Test an expression</a> before binding with it.
      </p>
    </details>
  );
}

/** A local date and time (the browser's picker), empty when not given. */
function LocalTime(props: {
  label: string;
  name: string;
  value: string;
  onInput: (v: string) => void;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        type="datetime-local"
        name={props.name}
        value={props.value}
        onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
      />
    </label>
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
