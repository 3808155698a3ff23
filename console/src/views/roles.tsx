import { useState } from 'preact/hooks';
import { listPage, type Page } from '../api';
import { GroupPath } from '../group-path';
import { parentOf, plural, type Role } from '../model';
import { go, href } from '../route';
import { ErrorBox, Pager, Section, useLoad } from '../ui';

/**
 * Every role the caller may list, by name, 50 a page: the built-in ones (the same
 * everywhere; a flat uid) and the custom ones (defined by a group, under which they hang),
 * each with its capabilities. A name prefix narrows the list (`?name=`).
 */
export function RolesView({ query }: { query: URLSearchParams }) {
  const name = query.get('name') ?? '';
  const [text, setText] = useState(name);
  return (
    <div>
      <h1>Roles</h1>
      <p class="hint">
        Built-in roles are the same in every organization and cannot be changed; a custom role is
        defined by a group and can be bound there and below (its capabilities are edited on that
        group’s Roles tab).
      </p>
      <form
        class="filters"
        role="search"
        aria-label="Search roles"
        onSubmit={(e) => {
          e.preventDefault();
          go(href('roles', '', { name: text.trim() }));
        }}
      >
        <label class="field">
          <span>Name starts with</span>
          <input
            type="search"
            name="name"
            value={text}
            onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Search</button>
      </form>
      <RoleList key={name} prefix={name} />
    </div>
  );
}

function RoleList({ prefix }: { prefix: string }) {
  const [tokens, setTokens] = useState<string[]>([]);
  const token = tokens[tokens.length - 1];
  const page = useLoad<Page<Role>>(
    () =>
      listPage<Role>('/iam/v2beta1/roles', 'roles', {
        name_prefix: prefix,
        order_by: 'name',
        page_size: 50,
        page_token: token,
      }),
    [prefix, token],
  );
  return (
    <Section id="role-list-h" title="Roles">
      <ErrorBox error={page.error} />
      {page.data ? (
        <>
          <p class="count" role="status">
            {plural(page.data.totalCount, 'role')}
          </p>
          {page.data.items.length > 0 ? (
            <table class="rows roles" aria-labelledby="role-list-h">
              <thead>
                <tr>
                  <th scope="col">Role</th>
                  <th scope="col">Capabilities</th>
                </tr>
              </thead>
              <tbody>
                {page.data.items.map((r) => (
                  <RoleRow key={r.uid} role={r} />
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

function RoleRow({ role: r }: { role: Role }) {
  const definedBy = parentOf(r.uid);
  return (
    <tr data-uid={r.uid}>
      {/* The name and its kind in one cell: two columns fit a 420 px screen. */}
      <th scope="row" title={r.description || undefined}>
        <span class="role-name">{r.name}</span>
        <span class="role-kind">
          {definedBy ? (
            <>
              custom, defined by <GroupPath uid={definedBy} />
            </>
          ) : (
            'built-in'
          )}
        </span>
      </th>
      <td>
        <ul class="cap-list" aria-label={`Capabilities of ${r.name}`}>
          {(r.capabilities ?? []).map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
      </td>
    </tr>
  );
}
