import { BindingWindow } from '../binding-window';
import { ConditionLine, type BindingCondition } from '../condition';
import type { Named } from '../model';
import { href } from '../route';
import { NameOf } from '../ui';
import { ActingForLine, type ActingFor } from './acting-for';

/** A binding that grants what was asked (`access:check`'s `grants`). */
export interface Grant {
  bindingUid: string;
  role: Named;
  groupUid: string;
  /** From the bound group down to the asked one, both included. */
  path: string[];
  /** A conditional binding's condition, as this check evaluated it. */
  condition?: BindingCondition & { result: boolean; error?: string };
}

/** A binding held on the path that does not grant it (`access:check`'s `nearest`). */
export interface Held extends Grant {
  /** Empty where the caller may not read the role. */
  roleCapabilities?: string[];
}

/** A scheduled binding that would grant once started (`access:check`'s `pending`). */
export interface Pending extends Grant {
  notBefore: string;
  expireTime?: string;
}

export interface CheckResult {
  allowed: boolean;
  capability: string;
  grants: Grant[];
  /** When denied: the identity's bindings on the group's path, nearest first. */
  nearest?: Held[];
  /** Scheduled bindings that would grant once started, soonest first; absent: none. */
  pending?: Pending[];
  /** When denied: conditional bindings that would grant had their condition held. */
  conditional?: Grant[];
  /** The console is signed in with a delegated token: whom it acts for, through whom. */
  actingFor?: ActingFor;
}

function RoleName({ role }: { role: Named }) {
  return <strong>{role.name || <NameOf kind="role" uid={role.uid} />}</strong>;
}

/** "here", "1 level up", "3 levels up". */
function where(path: string[]): string {
  const up = path.length - 1;
  return up === 0 ? 'here' : up === 1 ? '1 level up' : `${up} levels up`;
}

function BoundAt({ g }: { g: Grant }) {
  return (
    <>
      <NameOf kind="group" uid={g.groupUid} link={href('group', g.groupUid)} /> ({where(g.path)})
    </>
  );
}

/** The conditional bindings that would grant, had their condition held for this check. */
function NotHeld({ conditional }: { conditional: Grant[] }) {
  if (conditional.length === 0) return null;
  return (
    <>
      <p class="reason">These would grant it, but their condition did not hold for this check:</p>
      <ul class="reasons" aria-label="Conditions that did not hold">
        {conditional.map((g) => (
          <li key={g.bindingUid}>
            role <RoleName role={g.role} /> at <BoundAt g={g} />
            <ConditionLine condition={g.condition} />
            {g.condition?.error ? <span class="hint">{g.condition.error}</span> : null}
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * A check's answer in words: allowed, with the bindings that grant it; or denied, with the
 * reason: the bindings the identity holds nearest the group and what their roles grant,
 * which is not the asked capability.
 */
export function CheckAnswer(props: {
  result: CheckResult;
  identityName: string;
  groupName: string;
}) {
  const { result: r, identityName, groupName } = props;
  if (r.allowed)
    return (
      <div role="status" class="check-answer">
        <p class="allowed">
          Allowed: {identityName} may {r.capability} in {groupName}
        </p>
        <ActingForLine a={r.actingFor} capability={r.capability} />
        <ul class="grants" aria-label="Granted by">
          {r.grants.map((g) => (
            <li key={g.bindingUid}>
              role <RoleName role={g.role} /> bound at <BoundAt g={g} />
              <ConditionLine condition={g.condition} />
            </li>
          ))}
        </ul>
      </div>
    );
  const near = r.nearest ?? [];
  const pending = r.pending ?? [];
  return (
    <div role="status" class="check-answer">
      <p class="denied">
        Denied: {identityName} may not {r.capability} in {groupName}
      </p>
      <ActingForLine a={r.actingFor} capability={r.capability} />
      <NotHeld conditional={r.conditional ?? []} />
      {pending.length > 0 ? (
        <>
          <p class="reason">
            Not yet:{' '}
            {pending.length === 1 ? 'a binding that grants it has' : 'bindings that grant it have'}{' '}
            not started.
          </p>
          <ul class="reasons" aria-label="Not started yet">
            {pending.map((g) => (
              <li key={g.bindingUid}>
                role <RoleName role={g.role} /> at <BoundAt g={g} /> <BindingWindow b={g} />
              </li>
            ))}
          </ul>
        </>
      ) : near.length === 0 ? (
        <p class="reason">
          Why: {identityName} holds no role binding you can see here or above. A role with{' '}
          {r.capability} bound here or above would grant it.
        </p>
      ) : (
        <>
          <p class="reason">
            Why: none of the roles {identityName} holds here or above grants {r.capability}. Nearest
            first:
          </p>
          <ul class="reasons" aria-label="Why denied">
            {near.map((h) => (
              <li key={h.bindingUid}>
                role <RoleName role={h.role} /> at <BoundAt g={h} /> grants{' '}
                {h.roleCapabilities?.length ? (
                  <span class="caps">{h.roleCapabilities.join(' ')}</span>
                ) : (
                  'what you cannot see'
                )}
                ; it lacks <span class="lacks">{r.capability}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
