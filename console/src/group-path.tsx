import { ancestry } from './model';
import { useName } from './names';
import { groupHref } from './route';

/** One step of a path: the group's name, or "…" where the caller may not read it. */
function Step({ uid, last }: { uid: string; last: boolean }) {
  const name = useName('group', uid);
  if (name === undefined)
    return last ? (
      <code class="uid small">{uid}</code>
    ) : (
      <span title="a group you cannot see">…</span>
    );
  return last ? <a href={groupHref(uid)}>{name}</a> : <span>{name}</span>;
}

/**
 * A group as its path of names from the organization down (`acme / payments / ledger`),
 * the last a link to its page. A group above the caller's sight reads "…": its name is
 * never learned from here, as its GET would not tell it either.
 */
export function GroupPath({ uid }: { uid: string }) {
  const chain = ancestry(uid);
  return (
    <span class="group-path" title={uid}>
      {chain.map((u, i) => (
        <span key={u}>
          {i > 0 ? ' / ' : null}
          <Step uid={u} last={i === chain.length - 1} />
        </span>
      ))}
    </span>
  );
}
