import type { NameBook } from './name-book.js';
import type { Item } from './resource-kinds.js';
import { windowText } from './time-left.js';

/**
 * What access answers say beside their proofs, in words: a conditional grant's "when …",
 * a delegated caller's "as X for Y", and who may act for who-can's holders.
 */

/** A binding's condition as answers carry it (`when`, or a check's evaluated `condition`). */
export interface ConditionWords {
  expression: string;
  title?: string;
}

/** `when <title>`, or `when <expression>` for an untitled condition. */
export const whenText = (c: ConditionWords): string => `when ${c.title ?? c.expression}`;

/** A check's evaluated condition: whether it held, and why not where it did not evaluate. */
export function conditionText(c: ConditionWords & { result: boolean; error?: string }): string {
  const verdict = c.result ? 'held' : c.error ? `did not evaluate: ${c.error}` : 'did not hold';
  return `${whenText(c)} (${verdict})`;
}

/** The answer's `actingFor`: the caller is a delegated token. */
export interface ActingFor {
  identityUid: string;
  actors: string[];
  capabilities: string[];
  capabilityInScope?: boolean;
}

/**
 * `(as <actor> for <subject>; …)`, on standard error beside any output format: what is
 * answered is the subject's, asked through the actor chain (current actor first).
 */
export async function actingForNote(names: NameBook, a: ActingFor | undefined): Promise<string> {
  if (a === undefined) return '';
  const actors = await Promise.all(a.actors.map((u) => names.identityPath(u)));
  const scope =
    a.capabilityInScope === false
      ? '; this token may not use the capability asked about'
      : `; this token may use ${a.capabilities.join(',') || 'nothing'}`;
  return `(as ${actors.join(' via ')} for ${await names.identityPath(a.identityUid)}${scope})\n`;
}

/** A holder's delegation policy, as who-can answers it. */
interface HolderDelegation {
  identityUid: string;
  actors: string[];
  capabilities: string[];
  maxLifetimeSeconds: number;
}

/** Who-can's rows for identities that hold the capability only by conditional bindings. */
export function conditionalHolderRows(holders: Item[] | undefined): Item[] {
  return (holders ?? []).map((h) => ({ ...h, conditional: true }));
}

/** Who-can's delegations, a line each: who may act for which holder, capped how. */
export async function delegationLines(
  names: NameBook,
  ds: HolderDelegation[] | undefined,
): Promise<string> {
  if (ds === undefined || ds.length === 0) return '';
  const lines = await Promise.all(
    ds.map(async (d) => {
      const actors = await Promise.all(d.actors.map((u) => names.identityPath(u)));
      return (
        `  ${actors.join(', ')} may act for ${await names.identityPath(d.identityUid)}` +
        ` (at most ${d.capabilities.join(',')}; ${d.maxLifetimeSeconds}s a delegation)`
      );
    }),
  );
  return `delegations:\n${lines.join('\n')}\n`;
}

export interface Proof {
  bindingUid: string;
  role: { uid: string; name: string };
  groupUid: string;
  /** The group's path of names, where the caller may see it (the server's). */
  groupPath?: string;
  path: string[];
  /** A conditional binding's condition: evaluated (check) or not (who-can). */
  condition?: ConditionWords & { result: boolean; error?: string };
  when?: ConditionWords;
}

/** The role, with its binding's condition where it has one (`reader (when on call)`). */
export const roleOf = (p: Proof) => {
  const role = p.role.name || p.role.uid;
  const c = p.condition ?? p.when;
  return c === undefined ? role : `${role} (${whenText(c)})`;
};

/** A scheduled binding that would grant once started (the check answer's `pending`). */
export interface PendingProof extends Proof {
  notBefore: string;
  expireTime?: string;
}

/** How much of the path an answer counts (the API's `partial` and `countedFrom`). */
export interface Coverage {
  partial?: boolean;
  countedFrom?: string;
}

/**
 * Why a check is denied when scheduled bindings would grant: each with when it starts, in
 * the words of the binding list (`starts in 2h, for 8h`) and as the instant (UTC).
 */
export async function pendingLines(names: NameBook, pending: PendingProof[]): Promise<string> {
  const lines = await Promise.all(
    pending.map(
      async (g) =>
        `  role ${roleOf(g)} bound at ${await names.groupPath(g.groupUid)} (binding ${g.bindingUid})\n` +
        `    ${windowText(g)} (${g.notBefore})`,
    ),
  );
  return `not yet: ${pending.length === 1 ? 'a binding that grants it has' : 'bindings that grant it have'} not started:\n${lines.join('\n')}\n`;
}

/**
 * The note for an answer that counts only part of the path, or undefined for a whole one:
 * on standard error, so that JSON and YAML on standard output keep their shape.
 */
export async function partialNote(
  names: NameBook,
  c: Coverage,
  what: string,
): Promise<string | undefined> {
  if (c.partial !== true) return undefined;
  if (c.countedFrom === undefined)
    return `(partial: only your own bindings are counted; ${what} bound elsewhere are not shown)\n`;
  return `(partial: ${what} bound above ${await names.groupPath(c.countedFrom)} are not shown)\n`;
}

/** A denial's conditional bindings: they would grant where their condition held. */
export async function conditionalLines(names: NameBook, cs: Proof[]): Promise<string> {
  const lines = await Promise.all(
    cs.map(
      async (g) =>
        `  role ${g.role.name || g.role.uid} bound at ${await names.groupPath(g.groupUid)} (binding ${g.bindingUid})\n` +
        `    ${g.condition ? conditionText(g.condition) : ''}`,
    ),
  );
  return `not here: ${cs.length === 1 ? 'a conditional binding grants' : 'conditional bindings grant'} it only when:\n${lines.join('\n')}\n`;
}
