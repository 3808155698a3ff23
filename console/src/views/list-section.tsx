import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { del, listPage } from '../api';
import { useCan } from '../can';
import { plural } from '../model';
import { PagedList, RowsTable, usePaged } from '../paged';
import { ConfirmDialog, ErrorBox, Section } from '../ui';
import { ReviewDialog, type AccessChange } from './access-delta';

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
}

/**
 * A kind of thing a group holds, as its list shows it: its heading's id, where the API
 * lists it (the answer's items under the path's last word), its noun, singular and plural
 * ("1 role binding", "you cannot list role bindings") and its capabilities to list and to
 * delete (the page's batch check answers them).
 */
export interface ListKind {
  id: string;
  path: string;
  plural: string;
  noun: [string, string];
  listCap: string;
  deleteCap: string;
}

/** A ListKind: `cap` is the capabilities' prefix (`role_bindings` for role_bindings.list). */
function kind(id: string, path: string, cap: string, one: string, many = `${one}s`): ListKind {
  const plural = path.slice(path.lastIndexOf('/') + 1);
  return {
    id,
    path,
    plural,
    noun: [one, many],
    listCap: `${cap}.list`,
    deleteCap: `${cap}.delete`,
  };
}

/** The kinds listed under a group (its tabs). */
export const KINDS = {
  identities: kind('identities-h', '/iam/v2beta1/identities', 'identity', 'identity', 'identities'),
  roleBindings: kind('bindings-h', '/iam/v2beta1/roleBindings', 'role_bindings', 'role binding'),
  roles: kind('roles-h', '/iam/v2beta1/roles', 'roles', 'role'),
  repos: kind('repos-h', '/registry/v2beta1/repos', 'repo', 'repo'),
  tags: kind('tags-h', '/registry/v2beta1/tags', 'tag', 'tag'),
  providers: kind(
    'idps-h',
    '/iam/v2beta1/identityProviders',
    'identity_providers',
    'identity provider',
  ),
  invites: kind('invites-h', '/iam/v2beta1/groupInvites', 'group_invites', 'invite'),
  subscriptions: kind('subs-h', '/events/v2beta1/subscriptions', 'subscriptions', 'subscription'),
};

export interface ListSectionProps<T> {
  kind: ListKind;
  /** The heading: the kind's plural noun ("Role bindings") unless another is given. */
  title?: string;
  query: Record<string, string>;
  columns: Column<T>[];
  /** What a row is called in its delete button's label and its confirmation ("role ops" by default). */
  label?: (row: T) => string;
  /** What goes with a row when it is deleted, as " and its 2 role bindings" ("" for nothing). */
  consequence?: (row: T) => Promise<string>;
  /**
   * The access change deleting a row makes (a role binding, an identity): its confirmation
   * then shows what the server says that does to access before the confirm button.
   */
  review?: (row: T) => AccessChange[];
  /** After a delete: for what went with the row elsewhere (an identity's role bindings). */
  onDeleted?: () => void;
  /** A change of it reads the list again (for a list that another one's change moves). */
  version?: number;
  /** What follows the list (a create form): given the list's reload, for after a create. */
  children?: ComponentChildren | ((reload: () => void) => ComponentChildren);
}

/**
 * One kind of thing under a group: its first page (and the next ones on request) with the
 * total, a delete button per row when the caller may delete (each asks first), and
 * whatever create form the caller passes in. A list the caller may not read says so
 * instead of showing an empty list.
 */
export function ListSection<T extends { uid: string; name?: string }>(props: ListSectionProps<T>) {
  const can = useCan();
  const k = props.kind;
  const label = props.label ?? ((row: T) => `${k.noun[0]} ${row.name ?? row.uid}`);
  const [again, setAgain] = useState(0);
  const reload = () => setAgain((a) => a + 1);
  return (
    <Section
      id={k.id}
      title={props.title ?? k.noun[1].charAt(0).toUpperCase() + k.noun[1].slice(1)}
    >
      {can(k.listCap) ? (
        <Rows {...props} {...k} {...{ label, again, reload }} deletable={can(k.deleteCap)} />
      ) : (
        <p class="count cannot">You cannot list {k.noun[1]} here.</p>
      )}
      {typeof props.children === 'function' ? props.children(reload) : props.children}
    </Section>
  );
}

/**
 * A list's props with its kind's spread in, its label settled, whether rows may go, and
 * the section's reload (`again` counts them).
 */
type RowsProps<T> = ListSectionProps<T> &
  ListKind & { label: (row: T) => string; deletable: boolean; again: number; reload: () => void };

function Rows<T extends { uid: string }>(props: RowsProps<T>) {
  const [doomed, setDoomed] = useState<{ row: T; goes: string } | undefined>(undefined);
  const [probeError, setProbeError] = useState<unknown>(undefined);
  const page = usePaged<T>(
    (p) => listPage(props.path, props.plural, { ...props.query, ...p }),
    [props.path, JSON.stringify(props.query), props.again, props.version],
  );
  const ask = (row: T) => {
    setProbeError(undefined);
    (props.consequence ?? (() => Promise.resolve('')))(row).then(
      (goes) => setDoomed({ row, goes }),
      (e: unknown) => setProbeError(e),
    );
  };
  return (
    <>
      <PagedList
        paged={page}
        alerts={<ErrorBox error={probeError} />}
        count={(d) => (
          <>
            {plural(d.totalCount, props.noun[0], props.noun[1])}
            {d.totalCount === '0' ? '' : ' in all'}
          </>
        )}
      >
        {(d) => <RowTable {...props} rows={d.items} onDelete={ask} />}
      </PagedList>
      {doomed ? (
        <DeleteDialog
          title={`Delete ${props.label(doomed.row)}?`}
          changes={props.review?.(doomed.row)}
          onClose={() => setDoomed(undefined)}
          onConfirm={async () => {
            await del(`${props.path}/${doomed.row.uid}`);
            setDoomed(undefined);
            props.reload();
            props.onDeleted?.();
            // The button pressed is gone with its row: the focus goes to the list's heading,
            // once the modal dialog (which holds the focus while open) is gone.
            setTimeout(() => document.getElementById(props.id)?.focus(), 0);
          }}
        >
          This deletes {props.label(doomed.row)}
          {doomed.goes}. It cannot be undone.
        </DeleteDialog>
      ) : null}
    </>
  );
}

/** The delete confirmation, with the access delta when the delete changes access. */
function DeleteDialog(props: {
  title: string;
  changes: AccessChange[] | undefined;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const { changes, ...rest } = props;
  return changes ? (
    <ReviewDialog {...rest} confirm="Yes, delete" changes={changes} />
  ) : (
    <ConfirmDialog {...rest} confirm="Yes, delete" />
  );
}

function RowTable<T extends { uid: string }>(
  props: RowsProps<T> & { rows: T[]; onDelete: (row: T) => void },
) {
  return (
    <RowsTable
      labelledBy={props.id}
      headers={[...props.columns.map((c) => c.header), ...(props.deletable ? ['Actions'] : [])]}
    >
      {props.rows.map((row) => (
        <tr key={row.uid} data-uid={row.uid}>
          {props.columns.map((c) => (
            <td key={c.header}>{c.cell(row)}</td>
          ))}
          {props.deletable ? (
            <td>
              <button
                type="button"
                class="danger"
                aria-label={`Delete ${props.label(row)}`}
                onClick={() => props.onDelete(row)}
              >
                Delete
              </button>
            </td>
          ) : null}
        </tr>
      ))}
    </RowsTable>
  );
}
