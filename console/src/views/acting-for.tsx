import { NameOf } from '../ui';

/**
 * "As X for Y" (docs/oauth.md, delegation): the console is signed in with a delegated token,
 * so an access answer is about what that token may do: its subject's grants, used through
 * its actors, only within the capabilities the token may use now. The server says so on the
 * answer itself (`actingFor`), from the token alone.
 */
export interface ActingFor {
  /** The subject the token acts for. */
  identityUid: string;
  /** The actor chain, the current actor first. */
  actors: string[];
  /** What the token may use now. */
  capabilities: string[];
  /** A check's: whether the asked capability is among them. */
  capabilityInScope?: boolean;
}

/** One line: who acts for whom, and what the token may use (and the asked capability). */
export function ActingForLine(props: { a: ActingFor | undefined; capability?: string }) {
  const { a, capability } = props;
  if (a === undefined) return null;
  return (
    <p class="acting-for" role="note">
      As{' '}
      {a.actors.map((uid, i) => (
        <span key={uid}>
          {i > 0 ? ', for ' : ''}
          <NameOf kind="identity" uid={uid} />
        </span>
      ))}{' '}
      for <NameOf kind="identity" uid={a.identityUid} />: this token may use only{' '}
      {a.capabilities.length > 0 ? a.capabilities.join(' ') : 'nothing'}
      {capability !== undefined && a.capabilityInScope !== undefined
        ? a.capabilityInScope
          ? `; ${capability} is among them.`
          : `; ${capability} is not among them, whatever the bindings say.`
        : '.'}
    </p>
  );
}
