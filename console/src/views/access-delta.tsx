import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { post } from '../api';
import { plural } from '../model';
import { ConfirmDialog, ErrorBox, NameOf, Uid } from '../ui';

/**
 * Review before change: what a change would do to access, shown above
 * its confirm button ("3 identities gain repo.push in acme/platform"). It asks
 * `access:simulate`, which writes nothing, with the person's own token, so it shows what
 * that person may see of the delta and whether they may make the change. The console never
 * works access out itself: every line is the server's answer, grouped for reading.
 */

/** One change, as `access:simulate` takes it. */
export type AccessChange =
  | {
      createRoleBinding: {
        groupUid: string;
        identityUid: string;
        roleUid: string;
        expireTime?: string;
      };
    }
  | { deleteRoleBinding: { uid: string } }
  | { updateRole: { uid: string; capabilities: string[] } }
  | { deleteIdentity: { uid: string } }
  | { deleteGroup: { uid: string } };

interface Ref {
  uid: string;
  name: string;
  /** Its path of names (`acme/platform`), where the person may list it; else empty. */
  path: string;
}
/** One identity's capabilities gained (or lost) at one group, as the server groups them. */
interface Delta {
  identity: Ref;
  group: Ref;
  effect: 'GAIN' | 'LOSE';
  capabilities: string[];
  unchangedBelow: { groupUid: string; capabilities: string[] }[];
}
interface Verdict {
  index: number;
  applied: boolean;
  permitted: boolean;
  reason?: string;
}
interface Simulated {
  changes: Verdict[];
  deltas: Delta[];
  nextPageToken?: string;
  totalCount: string;
}

/** The answer so far (its pages joined), and the way to the next page. */
export interface Simulation {
  answer: Simulated | undefined;
  error: unknown;
  loading: boolean;
  /** The first page took long: the person may decide without it. */
  slow: boolean;
  more: () => void;
}

const PAGE = 200;
const SLOW_MS = 8000;

/** Simulates `changes` (again whenever they change) and reads further pages on request. */
export function useSimulation(changes: AccessChange[]): Simulation {
  const key = JSON.stringify(changes);
  const [state, setState] = useState<{ answer?: Simulated; error?: unknown; loading: boolean }>({
    loading: true,
  });
  const [slow, setSlow] = useState(false);
  useEffect(() => {
    let live = true;
    setState({ loading: true });
    setSlow(false);
    const timer = setTimeout(() => live && setSlow(true), SLOW_MS);
    post<Simulated>('/iam/v2beta1/access:simulate', { changes, pageSize: PAGE }).then(
      (answer) => live && setState({ answer, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);
  const more = () => {
    const got = state.answer;
    if (!got?.nextPageToken || state.loading) return;
    setState({ answer: got, loading: true });
    post<Simulated>('/iam/v2beta1/access:simulate', {
      changes,
      pageSize: PAGE,
      pageToken: got.nextPageToken,
    }).then(
      (next) =>
        setState({
          answer: { ...next, deltas: [...got.deltas, ...next.deltas] },
          loading: false,
        }),
      (error: unknown) => setState({ answer: got, error, loading: false }),
    );
  };
  return { answer: state.answer, error: state.error, loading: state.loading, slow, more };
}

/**
 * One line of the summary: the identities that gain (or lose) the same capabilities at the
 * same group ("3 identities gain repo.list in platform: ann, ben, cat").
 */
interface Line {
  effect: 'GAIN' | 'LOSE';
  capabilities: string[];
  group: Ref;
  identities: Ref[];
  unchangedBelow: string[];
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Names in order; one the caller may not read (shown by uid) last. */
const byName = (a: Ref, b: Ref) =>
  byText(a.name ? `0${a.name}` : `1${a.uid}`, b.name ? `0${b.name}` : `1${b.uid}`);

/**
 * The server's entries (one identity's capabilities at one group) grouped for reading: the
 * identities that gain or lose the same capabilities at the same group (with the same
 * groups below where nothing changes) on one line. Losses first, then the most identities.
 * Only grouping: every line is made of the server's entries, nothing is worked out here.
 */
function summarise(deltas: readonly Delta[]): Line[] {
  const lines = new Map<string, Line>();
  for (const d of deltas) {
    const below = [...d.unchangedBelow].sort((a, b) => byText(a.groupUid, b.groupUid));
    const key = [d.effect, d.group.uid, d.capabilities.join(' '), JSON.stringify(below)].join('\0');
    const line = lines.get(key) ?? {
      effect: d.effect,
      capabilities: [...d.capabilities],
      group: d.group,
      identities: [],
      unchangedBelow: below.map((u) => u.groupUid),
    };
    line.identities.push(d.identity);
    lines.set(key, line);
  }
  for (const l of lines.values()) l.identities.sort(byName);
  return [...lines.values()].sort(
    (a, b) =>
      (a.effect === b.effect ? 0 : a.effect === 'LOSE' ? -1 : 1) ||
      b.identities.length - a.identities.length ||
      byText(a.capabilities[0] ?? '', b.capabilities[0] ?? ''),
  );
}

/** Names shown per line before "and N more". */
const NAMES = 8;

/**
 * What the change would do, as the signed-in person may see it. `known`: names the person
 * was given for identities the server's delta leaves unnamed (a request names its requester
 * to its approver), shown in place of their uids.
 */
export function AccessDelta({
  sim,
  known = {},
}: {
  sim: Simulation;
  known?: Readonly<Record<string, string>>;
}) {
  const got = sim.answer;
  if (!got)
    return (
      <section class="access-delta" aria-label="What this changes" aria-live="polite">
        {sim.loading ? (
          <p role="status">
            Working out what this changes to access…
            {sim.slow ? ' This is taking long; you may decide without it.' : ''}
          </p>
        ) : (
          <>
            <p class="warning">
              Arbor could not work out what this changes to access. Nothing has been changed; you
              may still go ahead, or cancel.
            </p>
            <ErrorBox error={sim.error} />
          </>
        )}
      </section>
    );
  const lines = summarise(
    got.deltas.map((d) =>
      d.identity.name || !known[d.identity.uid]
        ? d
        : { ...d, identity: { ...d.identity, name: known[d.identity.uid]! } },
    ),
  );
  const shown = got.deltas.length;
  const total = Number(got.totalCount);
  return (
    <section class="access-delta" aria-label="What this changes" aria-live="polite">
      <h3>What this changes to access</h3>
      {got.changes
        .filter((v) => !v.applied || !v.permitted)
        .map((v) => (
          <p key={v.index} class="warning" role="alert">
            {v.applied
              ? 'You may not make this change: the server will refuse it'
              : 'This change names something that is gone or that you cannot see'}
            {v.reason ? ` (${v.reason})` : ''}.
          </p>
        ))}
      {lines.length === 0 ? (
        <p class="delta-none">Nobody you can see gains or loses access.</p>
      ) : (
        <ul class="delta-lines">
          {lines.map((l) => (
            <li
              key={`${l.effect}${l.capabilities.join()}${l.group.uid}${l.identities[0]?.uid ?? ''}`}
              class={l.effect.toLowerCase()}
            >
              <DeltaLine line={l} />
            </li>
          ))}
        </ul>
      )}
      {total > shown ? (
        <p class="delta-partial">
          Counted from {shown} of {plural(total, 'change')} in access.{' '}
          <button type="button" class="small" disabled={sim.loading} onClick={sim.more}>
            Count the next {Math.min(PAGE, total - shown)}
          </button>
        </p>
      ) : null}
      <p class="hint">
        Worked out by the server from the role bindings you may list; nothing is changed until you
        confirm.
      </p>
      <ErrorBox error={sim.error} />
    </section>
  );
}

function DeltaLine({ line }: { line: Line }) {
  const n = line.identities.length;
  const names = line.identities.slice(0, NAMES);
  const below = line.unchangedBelow;
  const caps = line.capabilities;
  const verb = line.effect === 'GAIN' ? 'gain' : 'lose';
  return (
    <>
      <span class="delta-head">
        {plural(n, 'identity', 'identities')} <strong>{n === 1 ? `${verb}s` : verb}</strong>{' '}
        {caps.length === 1 ? (
          <code>{caps[0]}</code>
        ) : (
          plural(caps.length, 'capability', 'capabilities')
        )}{' '}
        in{' '}
        {line.group.path || line.group.name ? (
          <strong>{line.group.path || line.group.name}</strong>
        ) : (
          <Uid uid={line.group.uid} />
        )}
        {below.length > 0 ? (
          <>
            {' '}
            (except below{' '}
            {below.slice(0, 3).map((u, i) => (
              <span key={u}>
                {i > 0 ? ', ' : ''}
                <NameOf kind="group" uid={u} />
              </span>
            ))}
            {below.length > 3 ? ` and ${below.length - 3} more` : ''}, where it is held anyway)
          </>
        ) : null}
        :{' '}
        <span class="delta-who">
          {names.map((i, k) => (
            <span key={i.uid}>
              {k > 0 ? ', ' : ''}
              {i.name || <Uid uid={i.uid} />}
            </span>
          ))}
          {n > NAMES ? ` and ${n - NAMES} more` : ''}
        </span>
      </span>
      {caps.length > 1 ? (
        <span class="delta-caps">
          {caps.map((c, i) => (
            <span key={c}>
              {i > 0 ? ', ' : ''}
              <code>{c}</code>
            </span>
          ))}
        </span>
      ) : null}
    </>
  );
}

/**
 * A confirmation that shows the access delta of `changes` before its confirm button. The
 * change set is the one `onConfirm` makes: the caller builds both from the same values.
 * Nothing is written until confirm; a failed simulation is shown and does not block.
 */
export function ReviewDialog(props: {
  title: string;
  confirm: string;
  changes: AccessChange[];
  onConfirm: () => Promise<void>;
  onClose: () => void;
  tone?: 'danger' | 'primary';
  /** As AccessDelta's. */
  known?: Readonly<Record<string, string>>;
  children: ComponentChildren;
}) {
  const sim = useSimulation(props.changes);
  return (
    <ConfirmDialog
      title={props.title}
      confirm={props.confirm}
      tone={props.tone}
      onConfirm={props.onConfirm}
      onClose={props.onClose}
      pending={sim.loading && !sim.answer && !sim.slow}
      review={<AccessDelta sim={sim} known={props.known} />}
    >
      {props.children}
    </ConfirmDialog>
  );
}
