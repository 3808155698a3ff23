import { useState } from 'preact/hooks';
import { get, listPage } from '../api';
import { GroupPath } from '../group-path';
import { parentOf, plural, type Group, type Identity } from '../model';
import { go, href } from '../route';
import { PagedList, RowsTable, usePaged } from '../paged';
import { ErrorBox, Section, useLoad } from '../ui';
import { signedIn, When } from './identity';

interface IdentityRow extends Identity {
  lastSeenTime?: string;
  createTime?: string;
}

/** The organizations offered to search in: the first page of where the caller's view begins. */
const ORGS_PAGE = 100;

/**
 * What to ask the API for a search text: `name` alone is a name prefix anywhere in the
 * organization; `team/ops/ci` is the group path `team/ops` (below the organization) and the
 * name prefix `ci` in it and below. Pure.
 */
export function parseSearch(text: string): { path: string[]; prefix: string } {
  const parts = text.split('/');
  const prefix = parts.pop() ?? '';
  return { path: parts.map((p) => p.trim()).filter((p) => p !== ''), prefix };
}

/**
 * Every identity of an organization the caller may list, 50 a page, by name, with a search
 * by name (a prefix) or by path (`folder/sub/name`): each page is one List call with
 * filters, never the whole organization fetched at once. Each name leads to its page.
 */
export function IdentitiesView({ query }: { query: URLSearchParams }) {
  const orgs = useLoad(
    () =>
      listPage<Group>('/iam/v2beta1/groups', 'groups', {
        top_level: 'true',
        order_by: 'name',
        page_size: ORGS_PAGE,
      }),
    [],
  );
  const org = query.get('org') ?? orgs.data?.items[0]?.uid ?? '';
  const q = query.get('q') ?? '';
  const [text, setText] = useState(q);
  const set = (k: string, v: string) => {
    const next: Record<string, string | undefined> = Object.fromEntries(query.entries());
    next[k] = v || undefined;
    go(href('identities', '', next));
  };
  return (
    <div>
      <h1>Identities</h1>
      <ErrorBox error={orgs.error} />
      <form
        class="filters"
        role="search"
        aria-label="Search identities"
        onSubmit={(e) => {
          e.preventDefault();
          set('q', text.trim());
        }}
      >
        <label class="field">
          <span>Organization</span>
          <select
            name="org"
            value={org}
            onChange={(e) => set('org', (e.currentTarget as HTMLSelectElement).value)}
          >
            {(orgs.data?.items ?? []).map((g) => (
              <option key={g.uid} value={g.uid}>
                {g.name}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Name or path (folder/name)</span>
          <input
            type="search"
            name="q"
            value={text}
            placeholder="ci-deployer or team/ci"
            onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Search</button>
      </form>
      {org ? (
        <Results key={`${org}?${q}`} org={org} q={q} />
      ) : orgs.data ? (
        <p>There is no group you may list.</p>
      ) : (
        <p role="status">Loading…</p>
      )}
    </div>
  );
}

/** The group the search's path names (the organization itself when there is none). */
async function anchorOf(org: string, path: string[]): Promise<string> {
  if (path.length === 0) return org;
  const top = await get<Group>(`/iam/v2beta1/groups/${org}`);
  const g = await get<Group>(
    `/iam/v2beta1/groups:resolve?${new URLSearchParams({ path: [top.name, ...path].join('/') }).toString()}`,
  );
  return g.uid;
}

function Results({ org, q }: { org: string; q: string }) {
  const { path, prefix } = parseSearch(q);
  const page = usePaged<IdentityRow>(
    async (p) =>
      listPage('/iam/v2beta1/identities', 'identities', {
        'uidp.descendants_of': await anchorOf(org, path),
        name_prefix: prefix.trim(),
        order_by: 'name',
        ...p,
      }),
    [org, q],
  );
  return (
    <Section id="identity-list-h" title={q ? `Identities matching “${q}”` : 'All identities'}>
      <PagedList
        paged={page}
        announce
        count={(d) => (
          <>
            {plural(d.totalCount, 'identity', 'identities')}
            {d.totalCount === '0' ? ' you can list match.' : ''}
          </>
        )}
      >
        {(d) => (
          <RowsTable labelledBy="identity-list-h" headers={['Name', 'Group', 'Last signed in']}>
            {d.items.map((i) => (
              <tr key={i.uid} data-uid={i.uid}>
                <td>
                  <a href={href('identity', i.uid)}>{i.name}</a>
                </td>
                <td>
                  <GroupPath uid={parentOf(i.uid) ?? org} />
                </td>
                <td>{signedIn(i) ? <When iso={i.lastSeenTime!} /> : 'never'}</td>
              </tr>
            ))}
          </RowsTable>
        )}
      </PagedList>
    </Section>
  );
}
