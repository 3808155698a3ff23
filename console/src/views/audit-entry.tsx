import { useState } from 'preact/hooks';
import { actorUid } from '../names';
import { href } from '../route';
import { ago, localTime } from '../time';
import { NameOf } from '../ui';

export interface AuditEvent {
  id: string;
  time: string;
  actor: string;
  door: string;
  resourceType: string;
  resourceUid: string;
  operation: string;
  eventType: string;
  changedFields?: string[];
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** `iam.arbor.dev/RoleBinding` → `role binding`. */
function kindWords(type: string): string {
  const k = type.slice(type.lastIndexOf('/') + 1);
  return k.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

function Actor({ actor }: { actor: string }) {
  const uid = actorUid(actor);
  // The actor's page, which leads on to everything it changed.
  if (uid) return <NameOf kind="identity" uid={uid} />;
  if (actor === 'admin') return <span>the admin token</span>;
  return <span>Arbor ({actor.replace(/^system:/, '')})</span>;
}

const show = (v: unknown) => (v === undefined ? '—' : JSON.stringify(v, null, 1));

/** The fields that changed, before and after, side by side. */
function Diff({ ev }: { ev: AuditEvent }) {
  const before = ev.before ?? {};
  const after = ev.after ?? {};
  const fields = ev.changedFields?.length
    ? ev.changedFields
    : [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>
        {ev.operation === 'update' ? `What changed (${fields.join(', ')})` : 'Details'}
      </summary>
      {open ? <DiffTable fields={fields} before={before} after={after} /> : null}
    </details>
  );
}

function DiffTable(props: {
  fields: string[];
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}) {
  const { fields, before, after } = props;
  return (
    <table class="diff" aria-label="Before and after">
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {fields.map((f) => (
          <tr key={f}>
            <th scope="row">{f}</th>
            <td>
              <code>{show(before[f])}</code>
            </td>
            <td>
              <code>{show(after[f])}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const uidIn = (x: unknown): string | undefined =>
  typeof x === 'object' && x !== null && typeof (x as { uid?: unknown }).uid === 'string'
    ? (x as { uid: string }).uid
    : undefined;

/**
 * What the record's thing is called: its name; for a binding, its role for its identity
 * (a record keeps references as uids alone, so their names are read as the caller may).
 */
function Title({ ev }: { ev: AuditEvent }) {
  const shown = ev.after ?? ev.before ?? {};
  if (typeof shown.name === 'string' && shown.name) return <>{shown.name}</>;
  const role = uidIn(shown.role);
  const identity = uidIn(shown.identity);
  if (role && identity)
    return (
      <>
        <NameOf kind="role" uid={role} /> for <NameOf kind="identity" uid={identity} />
      </>
    );
  return <code class="uid small">{ev.resourceUid}</code>;
}

/** One change: when (local and relative), who, what it did to which thing, by name. */
export function AuditEntry({ ev }: { ev: AuditEvent }) {
  return (
    <li>
      <time dateTime={ev.time} title={ev.time}>
        {localTime(ev.time)}
      </time>{' '}
      <span class="rel">({ago(ev.time)})</span>: <Actor actor={ev.actor} />{' '}
      <strong class="op">{ev.operation}d</strong> {kindWords(ev.resourceType)}{' '}
      <a href={href('audit', '', { resource: ev.resourceUid })} title={ev.resourceUid}>
        <Title ev={ev} />
      </a>{' '}
      <span class="door">via {ev.door}</span>
      <Diff ev={ev} />
    </li>
  );
}
