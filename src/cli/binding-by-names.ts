import { call, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import type { Item } from './resource-kinds.js';

type Opts = Record<string, unknown>;

interface BindingPage {
  roleBindings?: Item[];
}

function refUid(b: Item, key: string): string {
  const ref = b[key];
  if (typeof ref !== 'object' || ref === null) return '';
  const uid = (ref as Item).uid;
  return typeof uid === 'string' ? uid : '';
}

/**
 * `arbor role-bindings get|delete` take a binding by its uid, or by what it is: `--group`,
 * `--identity` and `--role` (names or uids, already resolved to uids in `o`; `given` holds
 * them as typed, for messages). A binding has no name of its own, so these three are its
 * name: the one binding of that identity to that role bound at exactly that group.
 * @throws CliError USAGE (a uid and the flags, or flags missing), NOT_FOUND (no such binding
 *   you can see), INVALID (several: their uids, to pick one).
 */
async function bindingUidByNames(
  s: Session,
  positional: readonly string[],
  o: Opts,
  given: Opts,
): Promise<string | undefined> {
  const flags = (['group', 'identity', 'role'] as const).filter((f) => typeof o[f] === 'string');
  if (flags.length === 0) {
    if (positional.length === 0)
      throw new CliError(
        'give a role binding: its uid, or --group, --identity and --role',
        EXIT.USAGE,
      );
    return undefined;
  }
  if (positional.length > 0)
    throw new CliError(
      'give a role binding by uid or by --group, --identity and --role, not both',
      EXIT.USAGE,
    );
  const missing = (['group', 'identity', 'role'] as const).filter((f) => !flags.includes(f));
  if (missing.length > 0)
    throw new CliError(
      `a role binding is named by --group, --identity and --role: give ${missing.map((m) => `--${m}`).join(' and ')} too`,
      EXIT.USAGE,
    );
  const [group, identity, role] = [String(o.group), String(o.identity), String(o.role)];
  const page = await call<BindingPage>(s, 'GET', '/iam/v2beta1/roleBindings', {
    params: { query: { group, identity, role, page_size: '200' } },
  });
  // The filter may reach below the group: the binding is the one bound at it.
  const found = (page.roleBindings ?? []).filter(
    (b) =>
      refUid(b, 'group') === group &&
      refUid(b, 'identity') === identity &&
      refUid(b, 'role') === role,
  );
  const what = `${String(given.identity)} as ${String(given.role)} at ${String(given.group)}`;
  if (found.length === 0)
    throw new CliError(`no role binding of ${what} that you can see`, EXIT.NOT_FOUND);
  if (found.length > 1)
    throw new CliError(
      `${found.length} role bindings of ${what}: give one of their uids`,
      EXIT.INVALID,
      [...found.map((b) => `  ${String(b.uid)}`)],
    );
  return String(found[0]!.uid);
}

/**
 * `arbor role-bindings get|delete`'s arguments with a binding named by the flags as its uid
 * (`resolved` as given when a uid was given).
 */
export async function bindingArgs(
  s: Session,
  verb: 'get' | 'delete',
  resolved: unknown[],
  out: Opts,
  given: Opts,
): Promise<unknown[]> {
  const first = resolved[0];
  const positional =
    verb === 'get'
      ? typeof first === 'string'
        ? [first]
        : []
      : ((first as string[] | undefined) ?? []);
  const uid = await bindingUidByNames(s, positional, out, given);
  if (uid === undefined) return resolved;
  return verb === 'get' ? [uid] : [[uid]];
}
