import { useState } from 'preact/hooks';
import { del, listPage, patch } from '../api';
import type { Can } from '../can';
import { kindOf, parentOf, plural, type Group } from '../model';
import { forgetName } from '../names';
import { go, groupHref, href } from '../route';
import { ConfirmDialog, ErrorBox, Field, useAction } from '../ui';
import { GROUPS } from './children';

/** Rename and delete, each offered only when the page's batch check allows it. */
export function GroupActions(props: { group: Group; can: Can; onRenamed: () => void }) {
  const { group, can } = props;
  const [renaming, setRenaming] = useState(false);
  const [deleting, setDeleting] = useState<string | undefined>(undefined);
  if (!can('groups.update') && !can('groups.delete')) return null;
  return (
    <div class="actions">
      {can('groups.update') ? (
        renaming ? (
          <Rename group={group} onDone={() => (setRenaming(false), props.onRenamed())} />
        ) : (
          <button type="button" class="secondary" onClick={() => setRenaming(true)}>
            Rename
          </button>
        )
      ) : null}{' '}
      {can('groups.delete') ? (
        <button
          type="button"
          class="danger"
          onClick={() => void blockers(group.uid).then(setDeleting)}
        >
          Delete {kindOf(group.uid)}
        </button>
      ) : null}
      {deleting !== undefined ? (
        <ConfirmDialog
          title={`Delete ${kindOf(group.uid)} ${group.name}?`}
          confirm="Yes, delete"
          onClose={() => setDeleting(undefined)}
          onConfirm={async () => {
            await del(`${GROUPS}/${group.uid}`);
            const parent = parentOf(group.uid);
            go(parent ? groupHref(parent) : href('tree'));
          }}
        >
          This deletes {group.name}. {deleting}
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

/**
 * Nothing goes with a group: the API deletes only an empty one. Say so up front, with the
 * children the caller can see, rather than after the refusal.
 */
async function blockers(uid: string): Promise<string> {
  const p = await listPage(GROUPS, 'groups', { 'uidp.children_of': uid, page_size: 1 }).catch(
    () => undefined,
  );
  const n = p ? Number(p.totalCount) : 0;
  return n > 0
    ? `It still has ${plural(n, 'child', 'children')}: a group is deleted only when nothing hangs below it.`
    : 'A group is deleted only when nothing hangs below it (identities, bindings, repos…).';
}

function Rename({ group, onDone }: { group: Group; onDone: () => void }) {
  const [name, setName] = useState(group.name);
  const act = useAction();
  return (
    <form
      class="inline-form rename"
      aria-label="Rename"
      onSubmit={(e) => {
        e.preventDefault();
        void act.run(async () => {
          await patch(`${GROUPS}/${group.uid}`, { name });
          // Views that show the group by name (access, audit) read the new one.
          forgetName('group', group.uid);
          onDone();
        });
      }}
    >
      <Field label="New name" name="rename" value={name} onInput={setName} required />
      <button type="submit" disabled={act.busy}>
        Save
      </button>{' '}
      <button type="button" class="secondary" onClick={onDone}>
        Cancel
      </button>
      <ErrorBox error={act.error} />
    </form>
  );
}
