import { useState } from 'preact/hooks';
import { get, listPage, patch, type Page } from '../api';
import { usePermissionsAt, type CanAt } from '../can';
import { GroupPath } from '../group-path';
import { parentOf, plural } from '../model';
import { filtersOf, GroupFilter, SelectFilter } from '../filters';
import { PAGE_SIZE, PagedList, RowsTable, usePaged } from '../paged';
import { ConfirmDialog, NameOf, Section } from '../ui';
import { ago, localDate, localTime } from '../time';

/** One finding of `access:unused` (docs/api.md, "Last used, and unused access"). */
interface Finding {
  kind: 'roleBinding' | 'identity';
  uid: string;
  groupUid: string | null;
  identityUid: string;
  roleUid?: string;
  createTime: string;
  lastUsedTime?: string;
  expireTime?: string;
  expireBindings: string[];
}

const DAY_MS = 86_400_000;

/** A whole number of days in [min, max], or `fallback`. */
function days(raw: string | null, fallback: number, min: number, max: number): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

/** The groups a finding's remedy writes at: each binding's own group. */
function groupsOf(f: Finding): string[] {
  return f.expireBindings.map((b) => parentOf(b) ?? b);
}

/**
 * Expire in N days: every binding of the remedy brought forward to N days from now
 * (`PATCH …/roleBindings/{uid}?updateMask=expireTime`), asked first. Offered only where
 * the page's batch check says the caller may update every one of them.
 */
function Expire({ f, inDays, done }: { f: Finding; inDays: number; done: () => void }) {
  const [asking, setAsking] = useState(false);
  const n = f.expireBindings.length;
  const what =
    f.kind === 'roleBinding' ? 'this role binding' : `this identity's ${plural(n, 'role binding')}`;
  return (
    <>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Expire in {plural(inDays, 'day')}
      </button>
      {asking ? (
        <ConfirmDialog
          title={`Expire ${what} in ${plural(inDays, 'day')}?`}
          confirm="Yes, expire"
          onClose={() => setAsking(false)}
          onConfirm={async () => {
            const expireTime = new Date(Date.now() + inDays * DAY_MS).toISOString();
            for (const uid of f.expireBindings) {
              // Only ever forward: a binding that already expires sooner is left as it is.
              const b = await get<{ expireTime?: string }>(`/iam/v2beta1/roleBindings/${uid}`);
              if (b.expireTime !== undefined && b.expireTime <= expireTime) continue;
              await patch(`/iam/v2beta1/roleBindings/${uid}?updateMask=expireTime`, {
                expireTime,
              });
            }
            setAsking(false);
            done();
          }}
        >
          On {localDate(new Date(Date.now() + inDays * DAY_MS).toISOString())} {what} stops granting
          anything. An expiry already sooner is kept; none is ever taken back.
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function FindingRow(props: {
  f: Finding;
  can: CanAt | undefined;
  inDays: number;
  reload: () => void;
}) {
  const { f, can } = props;
  const mayExpire =
    can !== undefined &&
    f.expireBindings.length > 0 &&
    groupsOf(f).every((g) => can('role_bindings.update', g));
  return (
    <tr>
      <td>
        {f.kind === 'roleBinding' ? (
          <>
            <NameOf kind="identity" uid={f.identityUid} /> holds{' '}
            <NameOf kind="role" uid={f.roleUid ?? ''} />
          </>
        ) : (
          <>
            identity <NameOf kind="identity" uid={f.identityUid} />
          </>
        )}{' '}
        {f.groupUid ? (
          <>
            {f.kind === 'roleBinding' ? 'at' : 'in'} <GroupPath uid={f.groupUid} />
          </>
        ) : null}
      </td>
      <td>
        {f.lastUsedTime ? (
          <time dateTime={f.lastUsedTime} title={localTime(f.lastUsedTime)}>
            {ago(f.lastUsedTime)}
          </time>
        ) : (
          <>never (made {ago(f.createTime)})</>
        )}
      </td>
      <td>
        {f.expireTime ? <>expires {localDate(f.expireTime)} </> : null}
        {mayExpire ? <Expire f={f} inDays={props.inDays} done={props.reload} /> : null}
      </td>
    </tr>
  );
}

/** One page of findings, and the one batch check that decides where Expire is offered. */
function FindingTable(props: { page: Page<Finding>; inDays: number; reload: () => void }) {
  const can = usePermissionsAt(
    props.page.items.flatMap((f) =>
      groupsOf(f).map((groupUid) => ({ capability: 'role_bindings.update', groupUid })),
    ),
  );
  return (
    <RowsTable labelledBy="findings-h" headers={['Access', 'Last used', 'Remedy']}>
      {props.page.items.map((f) => (
        <FindingRow key={f.uid} f={f} can={can} inDays={props.inDays} reload={props.reload} />
      ))}
    </RowsTable>
  );
}

/** The kind filter's choices: both kinds, or one. */
const KIND_OPTIONS: Array<[string, string]> = [
  ['', 'role bindings and identities'],
  ['roleBinding', 'role bindings'],
  ['identity', 'identities'],
];

/** The filters, kept in the address: the window, the kind, a group (and below), N. */
function Filters({ query }: { query: URLSearchParams }) {
  const filters = filtersOf('unused', query);
  const number = (k: string, label: string, value: number, max: number) => (
    <label class="field">
      <span>{label}</span>
      <input
        type="number"
        name={`unused-${k}`}
        min={1}
        max={max}
        value={value}
        onChange={(e) => filters.set(k, (e.currentTarget as HTMLInputElement).value)}
      />
    </label>
  );
  return (
    <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
      {number('window', 'Unused for (days)', days(query.get('window'), 90, 1, 365), 365)}
      <SelectFilter filters={filters} param="kind" label="Kind" options={KIND_OPTIONS} />
      <GroupFilter filters={filters} />
      {number('expire', 'Expire in (days)', days(query.get('expire'), 30, 1, 365), 365)}
      {query.get('group') ? (
        <button type="button" onClick={() => filters.set('group', undefined)}>
          Any group
        </button>
      ) : null}
    </form>
  );
}

/**
 * Unused access: the role bindings that granted nothing and the identities that
 * did not authenticate for a window (90 days by default), as `access:unused` lists them
 * for the caller, by name, a page at a time, each with a one-step "Expire in N days".
 */
export function FindingsView({ query }: { query: URLSearchParams }) {
  const unusedFor = days(query.get('window'), 90, 1, 365);
  const inDays = days(query.get('expire'), 30, 1, 365);
  const group = query.get('group') ?? undefined;
  const kind = query.get('kind') || undefined;
  const page = usePaged<Finding>(
    (p) =>
      listPage('/iam/v2beta1/access:unused', 'findings', {
        window: `${unusedFor}d`,
        group,
        kind,
        ...p,
      }),
    [unusedFor, group, kind],
  );
  const shown = page.tokens.length * PAGE_SIZE;
  return (
    <div>
      <h1>Unused access</h1>
      <Filters query={query} />
      <Section id="findings-h" title={`Unused for ${plural(unusedFor, 'day')}`}>
        <PagedList
          paged={page}
          announce
          count={(d) => (
            <>
              {plural(d.totalCount, 'finding')}
              {d.items.length > 0 && d.nextPageToken !== undefined
                ? `, showing ${shown + 1}–${shown + d.items.length}`
                : ''}
            </>
          )}
        >
          {(d) => <FindingTable page={d} inDays={inDays} reload={page.reload} />}
        </PagedList>
      </Section>
    </div>
  );
}
