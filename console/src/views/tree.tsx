import { useState } from 'preact/hooks';
import { get, listPage } from '../api';
import { getToken, tokenSubject } from '../auth';
import { isAdminToken } from '../can';
import { ancestry, kindOf, plural, ROOT_UID, type Group, type RoleBinding } from '../model';
import { go, groupHref, href } from '../route';
import { ErrorBox, Pager, Section, useLoad, useTitle } from '../ui';
import { CreateFolder, GROUPS, Search, useChildren } from './children';

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
 * Where the tree starts. The API has no "organizations only" filter: for the admin token,
 * the organizations among all groups (200 scanned a page); for an identity, the topmost
 * groups its own role bindings are at, which is where what it may see begins.
 */
function useTops(tokens: string[]) {
  const admin = isAdminToken();
  return useLoad(async () => {
    if (admin) {
      const p = await listPage<Group>(GROUPS, 'groups', {
        page_size: 200,
        page_token: tokens[tokens.length - 1],
      });
      return { groups: p.items.filter((g) => ROOT_UID.test(g.uid)), next: p.nextPageToken };
    }
    const sub = tokenSubject(getToken() ?? '') ?? '';
    const p = await listPage<RoleBinding>('/iam/v2beta1/roleBindings', 'roleBindings', {
      identity: sub,
      page_size: 200,
    });
    const at = [...new Set(p.items.map((b) => b.group.uid))];
    const tops = at.filter((u) => !ancestry(u).some((a) => a !== u && at.includes(a)));
    const groups = p.items.map((b) => b.group).filter((g) => tops.includes(g.uid));
    return { groups: [...new Map(groups.map((g) => [g.uid, g])).values()], next: undefined };
  }, [tokens[tokens.length - 1]]);
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
            <p class="count">
              {tops.data.next
                ? 'No organization among these groups: More reads on.'
                : admin
                  ? 'No organization yet.'
                  : 'You hold no role binding.'}
            </p>
          ) : (
            <ul class="tree" aria-labelledby="tree-h">
              {tops.data.groups.map((g) => (
                <TreeNode key={g.uid} g={g} />
              ))}
            </ul>
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
