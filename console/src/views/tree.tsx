import { useState } from 'preact/hooks';
import { del, get, listPage, patch, post, type Page } from '../api';
import { ancestry, parentOf, ROOT_UID, type Group } from '../model';
import { go, href } from '../route';
import { ErrorBox, Field, Pager, Section, Uid, useAction, useLoad } from '../ui';

const PAGE_SIZE = 50;
const GROUPS = '/iam/v2beta1/groups';

/** Breadcrumbs from the organization down; a group the caller may not read shows its uid. */
function Breadcrumbs({ uid }: { uid: string }) {
  const chain = useLoad(
    () =>
      Promise.all(
        ancestry(uid).map((u) =>
          get<Group>(`${GROUPS}/${u}`).catch(() => ({ uid: u, name: u, description: '' })),
        ),
      ),
    [uid],
  );
  return (
    <nav aria-label="Breadcrumbs" class="crumbs">
      <ol>
        <li>
          <a href={href('tree')}>All groups</a>
        </li>
        {(chain.data ?? []).map((g, i, all) => (
          <li key={g.uid}>
            {i === all.length - 1 ? (
              <span aria-current="page">{g.name}</span>
            ) : (
              <a href={href('tree', g.uid)}>{g.name}</a>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/**
 * One page of children at a time (keyset page tokens), so the DOM holds at most a page
 * whatever the size of the folder; "More" moves on, "Back" returns (tokens kept in a stack).
 */
function Children({ uid }: { uid: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  // The rows on screen stay while the next page loads: their position comes with them,
  // not from the stack, or "showing 51–100" would label rows 1–50 meanwhile.
  const at = tokens.length * PAGE_SIZE;
  const loaded = useLoad<{ first: number; page: Page<Group> }>(
    async () => ({
      first: at,
      page: await listPage<Group>(GROUPS, 'groups', {
        ...(uid ? { 'uidp.children_of': uid } : {}),
        page_size: PAGE_SIZE,
        page_token: token,
      }),
    }),
    [uid, token],
  );
  const page = { ...loaded, data: loaded.data?.page };
  const first = loaded.data?.first ?? 0;
  return (
    <Section id="children-h" title={uid ? 'Folders here' : 'Organizations and folders you can see'}>
      <ErrorBox error={page.error} />
      {page.data ? (
        <>
          <p class="count" role="status">
            {page.data.totalCount} {uid ? 'children' : 'groups'}
            {page.data.items.length > 0
              ? `, showing ${first + 1}–${first + page.data.items.length}`
              : ''}
          </p>
          {page.data.items.length > 0 ? (
            <table class="rows" aria-labelledby="children-h">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Pages</th>
                </tr>
              </thead>
              <tbody>
                {page.data.items.map((g) => (
                  <tr key={g.uid} data-uid={g.uid}>
                    <td>
                      <a href={href('tree', g.uid)}>{g.name}</a>
                    </td>
                    <td>{g.description}</td>
                    <td>{ROOT_UID.test(g.uid) ? 'organization' : 'folder'}</td>
                    <td>
                      <a href={href('group', g.uid)} aria-label={`Group page of ${g.name}`}>
                        Group
                      </a>{' '}
                      <a
                        href={href('audit', '', { group: g.uid })}
                        aria-label={`Audit of ${g.name}`}
                      >
                        Audit
                      </a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <Pager tokens={tokens} setTokens={setTokens} next={page.data.nextPageToken} />
        </>
      ) : page.loading ? (
        <p role="status">Loading…</p>
      ) : null}
    </Section>
  );
}

function Search({ within }: { within: string }) {
  const [name, setName] = useState('');
  const [hits, setHits] = useState<Group[] | undefined>(undefined);
  const act = useAction();
  return (
    <Section id="search-h" title="Find by exact name">
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(async () => {
            const p = await listPage<Group>(GROUPS, 'groups', {
              name,
              ...(within ? { 'uidp.descendants_of': within } : {}),
              page_size: PAGE_SIZE,
            });
            setHits(p.items);
          });
        }}
      >
        <Field label="Group name" name="search" value={name} onInput={setName} required />
        <button type="submit" disabled={act.busy}>
          Search
        </button>
      </form>
      <ErrorBox error={act.error} />
      {hits ? (
        hits.length === 0 ? (
          <p role="status">No group of that name{within ? ' below here' : ''}.</p>
        ) : (
          <ul class="hits">
            {hits.map((g) => (
              <li key={g.uid}>
                <a href={href('tree', g.uid)}>{g.name}</a> <Uid uid={g.uid} />
              </li>
            ))}
          </ul>
        )
      ) : null}
    </Section>
  );
}

function CreateFolder({ parent, onCreated }: { parent: string; onCreated: (g: Group) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const act = useAction();
  return (
    <Section id="create-h" title={parent ? 'New folder' : 'New organization'}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(async () => {
            const body = { name, ...(description ? { description } : {}) };
            const g = await post<Group>(parent ? `${GROUPS}/${parent}` : GROUPS, body);
            setName('');
            setDescription('');
            onCreated(g);
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

function GroupActions({ group, onChanged }: { group: Group; onChanged: () => void }) {
  const [name, setName] = useState(group.name);
  const [confirming, setConfirming] = useState(false);
  const act = useAction();
  return (
    <Section id="actions-h" title="Rename or delete">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(async () => {
            await patch(`${GROUPS}/${group.uid}`, { name });
            onChanged();
          });
        }}
      >
        <Field label="New name" name="rename" value={name} onInput={setName} required />
        <button type="submit" disabled={act.busy}>
          Rename
        </button>
      </form>
      {confirming ? (
        <p>
          Delete <strong>{group.name}</strong>?{' '}
          <button
            type="button"
            class="danger"
            disabled={act.busy}
            onClick={() =>
              void act.run(async () => {
                setConfirming(false);
                await del(`${GROUPS}/${group.uid}`);
                go(href('tree', parentOf(group.uid) ?? ''));
              })
            }
          >
            Yes, delete
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </p>
      ) : (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Delete
        </button>
      )}
      <ErrorBox error={act.error} />
    </Section>
  );
}

/** The tree explorer: a group, its children one page at a time, and what can be done here. */
export function TreeView({ uid }: { uid: string; query: URLSearchParams }) {
  const group = useLoad(
    () => (uid ? get<Group>(`${GROUPS}/${uid}`) : Promise.resolve(undefined)),
    [uid],
  );
  const [version, setVersion] = useState(0);
  // The last answer may still be the previous group's while this one loads: never show it
  // (or rename or delete it) under this uid.
  const current = group.data?.uid === uid ? group.data : undefined;
  return (
    <div key={`${uid}:${version}`}>
      {uid ? <Breadcrumbs uid={uid} /> : null}
      <h1>{uid ? (current?.name ?? uid) : 'Groups'}</h1>
      <ErrorBox error={group.error} />
      {current ? (
        <p class="meta">
          <span class="description">{current.description}</span> <Uid uid={current.uid} />{' '}
          <a href={href('group', uid)}>Group page</a>{' '}
          <a href={href('audit', '', { group: uid })}>Audit</a>
        </p>
      ) : null}
      <Children uid={uid} />
      <Search within={uid} />
      <CreateFolder parent={uid} onCreated={() => setVersion((v) => v + 1)} />
      {current ? (
        <GroupActions
          key={current.uid}
          group={current}
          onChanged={() => {
            group.reload();
            setVersion((v) => v + 1);
          }}
        />
      ) : null}
    </div>
  );
}
