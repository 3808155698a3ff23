import { post } from '../api';
import { ErrorBox, Uid, useLoad } from '../ui';

/**
 * Issue 40, item 4: what a change would do to access, shown before its confirm button
 * ("3 identities gain repo.push in acme/platform"). Self-contained and not wired in yet: a
 * form that binds a role, deletes a binding or an identity, or edits a role's capabilities
 * renders `<AccessDelta changes={…} />` above its confirm, with the change it would make.
 * It asks `access:simulate` (which changes nothing) with the person's own token, so it
 * shows what that person may see of the delta, and whether they may make the change.
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
}
interface Delta {
  identity: Ref;
  capability: string;
  group: Ref;
  effect: 'GAIN' | 'LOSE';
  unchangedBelow: string[];
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

/** One line of the summary: how many identities gain or lose a capability at a group. */
interface Line {
  effect: 'GAIN' | 'LOSE';
  capability: string;
  group: Ref;
  identities: Ref[];
}

/** The deltas grouped by effect, capability and group, largest first. */
function summarise(deltas: readonly Delta[]): Line[] {
  const lines = new Map<string, Line>();
  for (const d of deltas) {
    const key = `${d.effect}\0${d.capability}\0${d.group.uid}`;
    const line = lines.get(key) ?? { ...d, identities: [] };
    line.identities.push(d.identity);
    lines.set(key, line);
  }
  return [...lines.values()].sort(
    (a, b) => b.identities.length - a.identities.length || (a.capability < b.capability ? -1 : 1),
  );
}

const PAGE = 200;

/** What `changes` would do to access, as the signed-in person may see it. */
export function AccessDelta({ changes }: { changes: AccessChange[] }) {
  const key = JSON.stringify(changes);
  const sim = useLoad<Simulated>(
    () => post<Simulated>('/iam/v2beta1/access:simulate', { changes, pageSize: PAGE }),
    [key],
  );
  if (sim.loading && !sim.data) return <p role="status">Working out what this changes…</p>;
  if (!sim.data) return <ErrorBox error={sim.error} />;
  const refused = sim.data.changes.filter((v) => !v.applied || !v.permitted);
  const lines = summarise(sim.data.deltas);
  const shown = sim.data.deltas.length;
  const total = Number(sim.data.totalCount);
  return (
    <section class="access-delta" aria-label="What this changes">
      {refused.map((v) => (
        <p key={v.index} class="error" role="alert">
          {v.applied ? 'You may not make this change' : 'This change names something missing'}
          {v.reason ? `: ${v.reason}` : ''}
        </p>
      ))}
      {lines.length === 0 ? (
        <p role="status">Nobody you can see gains or loses access.</p>
      ) : (
        <ul>
          {lines.map((l) => (
            <li key={`${l.effect}${l.capability}${l.group.uid}`}>
              {l.identities.length} {l.identities.length === 1 ? 'identity' : 'identities'}{' '}
              <strong>{l.effect === 'GAIN' ? 'gain' : 'lose'}</strong> <code>{l.capability}</code>{' '}
              in {l.group.name ? <strong>{l.group.name}</strong> : <Uid uid={l.group.uid} />}
              <span class="who">
                {' ('}
                {l.identities.map((i, n) => (
                  <span key={i.uid}>
                    {n > 0 ? ', ' : ''}
                    {i.name || <Uid uid={i.uid} />}
                  </span>
                ))}
                {')'}
              </span>
            </li>
          ))}
        </ul>
      )}
      {total > shown ? (
        <p role="status">
          Showing {shown} of {total} changes in access.
        </p>
      ) : null}
    </section>
  );
}
