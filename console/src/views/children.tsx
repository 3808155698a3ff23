import { useState } from 'preact/hooks';
import { listPage, post, type Page } from '../api';
import { useCan } from '../can';
import { kindOf, plural, type Group } from '../model';
import { groupHref } from '../route';
import { ErrorBox, Field, Pager, Section, Uid, useAction, useLoad } from '../ui';

export const PAGE_SIZE = 50;
export const GROUPS = '/iam/v2beta1/groups';

/** One page of a group's children (keyset page tokens), with the total and its position. */
export function useChildren(uid: string, tokens: string[]) {
  const token = tokens[tokens.length - 1];
  // The rows on screen stay while the next page loads: their position comes with them,
  // not from the stack, or "showing 51–100" would label rows 1–50 meanwhile.
  const at = tokens.length * PAGE_SIZE;
  return useLoad<{ first: number; page: Page<Group> }>(
    async () => ({
      first: at,
      page: await listPage<Group>(GROUPS, 'groups', {
        'uidp.children_of': uid,
        page_size: PAGE_SIZE,
        page_token: token,
      }),
    }),
    [uid, token],
  );
}

/**
 * The children tab: one page of children at a time, so the DOM holds at most a page
 * whatever the size of the folder; "More" moves on, "Back" returns. Then search below
 * here, and a new folder when the caller may create one.
 */
export function ChildrenTab({ uid }: { uid: string }) {
  const can = useCan();
  const [version, setVersion] = useState(0);
  return (
    <>
      <Children key={version} uid={uid} />
      <Search within={uid} />
      {can('groups.create') ? (
        <CreateFolder parent={uid} onCreated={() => setVersion((v) => v + 1)} />
      ) : null}
    </>
  );
}

function Children({ uid }: { uid: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const loaded = useChildren(uid, tokens);
  const page = loaded.data?.page;
  const first = loaded.data?.first ?? 0;
  return (
    <Section id="children-h" title="Folders here">
      <ErrorBox error={loaded.error} />
      {page ? (
        <>
          <p class="count" role="status">
            {plural(page.totalCount, 'child', 'children')}
            {page.items.length > 0 ? `, showing ${first + 1}–${first + page.items.length}` : ''}
          </p>
          {page.items.length > 0 ? <ChildTable rows={page.items} /> : null}
          <Pager tokens={tokens} setTokens={setTokens} next={page.nextPageToken} />
        </>
      ) : loaded.loading ? (
        <p role="status">Loading…</p>
      ) : null}
    </Section>
  );
}

function ChildTable({ rows }: { rows: Group[] }) {
  return (
    <table class="rows" aria-labelledby="children-h">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Description</th>
          <th scope="col">Kind</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((g) => (
          <tr key={g.uid} data-uid={g.uid}>
            <td>
              <a href={groupHref(g.uid)}>{g.name}</a>
            </td>
            <td>{g.description}</td>
            <td>{kindOf(g.uid)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Groups whose name starts with what is typed, below `within` (everywhere the caller sees,
 * when empty), by name: the API's `name_prefix` filter.
 */
export function Search({ within }: { within: string }) {
  const [name, setName] = useState('');
  const [hits, setHits] = useState<Group[] | undefined>(undefined);
  const act = useAction();
  return (
    <Section id="search-h" title="Find by name">
      <form
        role="search"
        aria-label="Find a group"
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(async () => {
            const p = await listPage<Group>(GROUPS, 'groups', {
              name_prefix: name,
              order_by: 'name',
              ...(within ? { 'uidp.descendants_of': within } : {}),
              page_size: PAGE_SIZE,
            });
            setHits(p.items);
          });
        }}
      >
        <Field
          label="Group name"
          name="search"
          value={name}
          onInput={setName}
          placeholder="starts with…"
          required
        />
        <button type="submit" disabled={act.busy}>
          Search
        </button>
      </form>
      <ErrorBox error={act.error} />
      {hits ? (
        hits.length === 0 ? (
          <p role="status">
            No group whose name starts with “{name}”{within ? ' below here' : ''}.
          </p>
        ) : (
          <ul class="hits">
            {hits.map((g) => (
              <li key={g.uid}>
                <a href={groupHref(g.uid)}>{g.name}</a> <Uid uid={g.uid} />
              </li>
            ))}
          </ul>
        )
      ) : null}
    </Section>
  );
}

/** A folder under `parent`, or an organization when `parent` is empty (admin only). */
export function CreateFolder(props: { parent: string; onCreated: (g: Group) => void }) {
  const { parent } = props;
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const act = useAction();
  return (
    <Section id="create-h" title={parent ? 'New folder' : 'New organization'}>
      <form
        aria-labelledby="create-h"
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(async () => {
            const body = { name, ...(description ? { description } : {}) };
            const g = await post<Group>(parent ? `${GROUPS}/${parent}` : GROUPS, body);
            setName('');
            setDescription('');
            props.onCreated(g);
          });
        }}
      >
        <Field label="Name" name="name" value={name} onInput={setName} required />
        <Field
          label="Description"
          name="description"
          value={description}
          onInput={setDescription}
        />
        <button type="submit" disabled={act.busy}>
          Create
        </button>
      </form>
      <ErrorBox error={act.error} />
    </Section>
  );
}
