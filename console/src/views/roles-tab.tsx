import { useState } from 'preact/hooks';
import { patch } from '../api';
import { CanContext, usePermissions } from '../can';
import type { Role } from '../model';
import { Picker, type Picked } from '../picker';
import { Section } from '../ui';
import { ReviewDialog } from './access-delta';
import { KINDS, ListSection } from './list-section';

/**
 * The roles a group defines (custom roles hang under the group that defines them), and a
 * place to change a role's capabilities: offered only where the caller holds roles.update
 * here (its own batch check, as the group page's holds no roles.* capability), and shown
 * with what the change does to access before it is made.
 */
const ROLE_CAPABILITIES = ['roles.list', 'roles.update', 'roles.delete'] as const;

export function RolesTab({ uid }: { uid: string; name: string }) {
  const can = usePermissions(uid, ROLE_CAPABILITIES);
  const [editing, setEditing] = useState<Role | undefined>(undefined);
  if (!can)
    return (
      <Section id="roles-h" title="Roles defined here">
        <p role="status">Loading…</p>
      </Section>
    );
  return (
    <CanContext.Provider value={can}>
      <ListSection<Role>
        kind={KINDS.roles}
        title="Roles defined here"
        query={{ 'uidp.children_of': uid }}
        consequence={() => Promise.resolve(' (a role that is still bound is kept)')}
        columns={[
          { header: 'Name', cell: (r) => <span class="role-name">{r.name}</span> },
          {
            header: 'Capabilities',
            cell: (r) => (
              <>
                <span class="caps role-caps">{(r.capabilities ?? []).join(', ')}</span>
                {can('roles.update') ? (
                  <>
                    {' '}
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Edit the capabilities of ${r.name}`}
                      onClick={() => setEditing(r)}
                    >
                      Edit
                    </button>
                  </>
                ) : null}
              </>
            ),
          },
        ]}
      >
        {(reload) => (
          <>
            <p class="hint">
              The built-in roles (viewer, editor, owner, …) are the same everywhere and cannot be
              changed.
            </p>
            {editing ? (
              <EditCapabilities
                key={editing.uid}
                role={editing}
                onDone={(changed) => {
                  setEditing(undefined);
                  if (changed) reload();
                  setTimeout(() => document.getElementById('roles-h')?.focus(), 0);
                }}
              />
            ) : null}
          </>
        )}
      </ListSection>
    </CanContext.Provider>
  );
}

/** A role's capabilities, edited as a draft; nothing is written before the review's confirm. */
function EditCapabilities({ role, onDone }: { role: Role; onDone: (changed: boolean) => void }) {
  const before = role.capabilities ?? [];
  const [caps, setCaps] = useState<string[]>(before);
  const [adding, setAdding] = useState<Picked | undefined>(undefined);
  // The set under review, frozen when the review opens: what is reviewed is what is written.
  const [reviewing, setReviewing] = useState<string[] | undefined>(undefined);
  const added = caps.filter((c) => !before.includes(c));
  const removed = before.filter((c) => !caps.includes(c));
  const unchanged = added.length === 0 && removed.length === 0;
  return (
    <>
      <form
        class="inline-form"
        aria-label={`Capabilities of ${role.name}`}
        onSubmit={(e) => {
          e.preventDefault();
          if (!unchanged && caps.length > 0) setReviewing([...caps]);
        }}
      >
        <h3>Capabilities of {role.name}</h3>
        <ul class="cap-edit" aria-label={`The capabilities ${role.name} would have`}>
          {caps.map((c) => (
            <li key={c}>
              <code>{c}</code>
              {added.includes(c) ? <span class="added"> (added)</span> : null}{' '}
              <button
                type="button"
                class="small"
                aria-label={`Remove ${c}`}
                onClick={() => setCaps(caps.filter((x) => x !== c))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        {removed.length > 0 ? (
          <p class="removed">
            Taken away: <code>{removed.join(', ')}</code>{' '}
            <button type="button" class="small" onClick={() => setCaps(before)}>
              Undo
            </button>
          </p>
        ) : null}
        <Picker
          kind="capability"
          label="Add a capability"
          name="add-capability"
          value={adding}
          onPick={setAdding}
        />
        <button
          type="button"
          class="secondary"
          disabled={!adding}
          onClick={() => {
            if (adding && !caps.includes(adding.uid)) setCaps([...caps, adding.uid]);
            setAdding(undefined);
          }}
        >
          Add
        </button>{' '}
        <button type="submit" disabled={unchanged || caps.length === 0}>
          Review the change
        </button>{' '}
        <button type="button" class="secondary" onClick={() => onDone(false)}>
          Cancel
        </button>
        {caps.length === 0 ? <p class="hint">A role keeps at least one capability.</p> : null}
      </form>
      {reviewing ? (
        <ReviewDialog
          title={`Change the capabilities of ${role.name}?`}
          confirm="Yes, change"
          tone={removed.length > 0 ? 'danger' : 'primary'}
          changes={[{ updateRole: { uid: role.uid, capabilities: reviewing } }]}
          onClose={() => setReviewing(undefined)}
          onConfirm={async () => {
            await patch(`/iam/v2beta1/roles/${role.uid}?updateMask=capabilities`, {
              capabilities: reviewing,
            });
            onDone(true);
          }}
        >
          {added.length > 0 ? `This gives ${role.name} ${added.join(', ')}. ` : ''}
          {removed.length > 0 ? `This takes ${removed.join(', ')} away from ${role.name}. ` : ''}
          It applies to every binding of the role.
        </ReviewDialog>
      ) : null}
    </>
  );
}
