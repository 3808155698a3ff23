import { useState } from 'preact/hooks';
import { get, listPage } from '../api';
import { isAdminToken } from '../can';
import { ancestry, kindOf, plural, type Group } from '../model';
import { go, groupHref, href } from '../route';
import { ErrorBox, Pager, Section, useLoad, useTitle } from '../ui';
import { CreateFolder, GROUPS, PAGE_SIZE, Search, useChildren } from './children';

/** Breadcrumbs from the organization down; a group the caller may not read says so. */
export function Breadcrumbs({ uid }: { uid: string }) {
  const chain = useLoad(
    () =>
      Promise.all(
        ancestry(uid).map((u) =>
          get<Group>(`${GROUPS}/${u}`).catch(() => ({
            uid: u,
            name: `(a ${kindOf(u)} you cannot see)`,
            description: '',
          })),
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
              <a href={groupHref(g.uid)}>{g.name}</a>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/** A group in the tree: its link, and its children on demand, one page at a time. */
function TreeNode({ g }: { g: Group }) {
  const [open, setOpen] = useState(false);
  return (
    <li>
      <button
        type="button"
        class="twisty"
        aria-expanded={open}
        aria-label={`Folders in ${g.name}`}
        onClick={() => setOpen(!open)}
      >
        {open ? '▾' : '▸'}
      </button>{' '}
      <a href={groupHref(g.uid)}>{g.name}</a> <span class="kind">{kindOf(g.uid)}</span>
      {open ? <Branch uid={g.uid} name={g.name} /> : null}
    </li>
  );
}

/** Never more than a page of children in the DOM, however large the folder. */
function Branch({ uid, name }: { uid: string; name: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const loaded = useChildren(uid, tokens);
  const page = loaded.data?.page;
  const first = loaded.data?.first ?? 0;
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!page) return <p role="status">Loading…</p>;
  return (
    <div class="branch">
      <p class="count">
        {plural(page.totalCount, 'child', 'children')}
        {page.items.length > 0 && page.totalCount !== String(page.items.length)
          ? `, showing ${first + 1}–${first + page.items.length}`
          : ''}
      </p>
      {page.items.length > 0 ? (
        <ul class="tree" aria-label={`Folders in ${name}`}>
          {page.items.map((c) => (
            <TreeNode key={c.uid} g={c} />
          ))}
        </ul>
      ) : null}
      <Pager
        tokens={tokens}
        setTokens={setTokens}
        next={page.nextPageToken}
        back={`Back (${name})`}
        more={`More (${name})`}
      />
    </div>
  );
}

/**
 * Where the tree starts: the API's `top_level` filter, the topmost groups the caller may
 * list (the organizations for the admin token; for an identity, where what it may see
 * begins, never a group above), a page at a time.
 */
function useTops(tokens: string[]) {
  const token = tokens[tokens.length - 1];
  // The position comes with the rows, as a branch's does (children.tsx).
  const first = tokens.length * PAGE_SIZE;
  return useLoad(async () => {
    const p = await listPage<Group>(GROUPS, 'groups', {
      top_level: 'true',
      order_by: 'name',
      page_size: PAGE_SIZE,
      page_token: token,
    });
    return { groups: p.items, next: p.nextPageToken, total: p.totalCount, first };
  }, [token]);
}

/** The tree: organizations (or where the caller's access begins), expandable, paged. */
export function TreeView() {
  useTitle('Tree');
  const [tokens, setTokens] = useState<string[]>([]);
  const tops = useTops(tokens);
  const admin = isAdminToken();
  return (
    <div>
      <h1 tabIndex={-1}>Groups</h1>
      <Section id="tree-h" title={admin ? 'Organizations' : 'Where your access begins'}>
        <ErrorBox error={tops.error} />
        {tops.data ? (
          tops.data.groups.length === 0 ? (
            <p class="count">{admin ? 'No organization yet.' : 'You may list no group.'}</p>
          ) : (
            <>
              {tops.data.next || tokens.length > 0 ? (
                <p class="count">
                  {plural(tops.data.total, admin ? 'organization' : 'group')}, showing{' '}
                  {tops.data.first + 1}–{tops.data.first + tops.data.groups.length}
                </p>
              ) : null}
              <ul class="tree" aria-labelledby="tree-h">
                {tops.data.groups.map((g) => (
                  <TreeNode key={g.uid} g={g} />
                ))}
              </ul>
            </>
          )
        ) : (
          <p role="status">Loading…</p>
        )}
        {tops.data ? <Pager tokens={tokens} setTokens={setTokens} next={tops.data.next} /> : null}
      </Section>
      <Search within="" />
      {admin ? <CreateFolder parent="" onCreated={(g) => go(groupHref(g.uid))} /> : null}
    </div>
  );
}
