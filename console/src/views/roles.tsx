import { useState } from 'preact/hooks';
import { listPage } from '../api';
import { GroupPath } from '../group-path';
import { parentOf, plural, type Role } from '../model';
import { go, href } from '../route';
import { PagedList, RowsTable, usePaged } from '../paged';
import { Section } from '../ui';

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
  const page = usePaged<Role>(
    (p) => listPage('/iam/v2beta1/roles', 'roles', { name_prefix: prefix, order_by: 'name', ...p }),
    [prefix],
  );
  return (
    <Section id="role-list-h" title="Roles">
      <PagedList paged={page} announce count={(d) => plural(d.totalCount, 'role')}>
        {(d) => (
          <RowsTable labelledBy="role-list-h" class="rows roles" headers={['Role', 'Capabilities']}>
            {d.items.map((r) => (
              <RoleRow key={r.uid} role={r} />
            ))}
          </RowsTable>
        )}
      </PagedList>
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
