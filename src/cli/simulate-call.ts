import type { components } from '../client/index.js';
import { call, type Session } from './api-session.js';

/** A binding's condition, as the server answers it. */
export interface WireCondition {
  expression: string;
  title?: string;
  description?: string;
}

/** What a delegation policy allows one actor, as the server answers it. */
interface WireAllowed {
  capabilities: string[];
  maxLifetimeSeconds: number;
}

/** One actor gaining, losing or changing the ability to act for an identity. */
export interface DelegationEntry {
  subject: { uid: string; name: string; path: string };
  actor: { uid: string; name: string; path: string };
  effect: 'GAIN' | 'LOSE' | 'CHANGE';
  before?: WireAllowed;
  after?: WireAllowed;
}

type Generated = components['schemas']['SimulateAccessResponse'];

/**
 * `access:simulate`'s request, answer and their parts, as the typed client has them, with
 * the conditional entries and delegation entries spelled here too, so that the CLI reads
 * them whether or not the typed client was generated since.
 */
export type SimulateRequest = components['schemas']['SimulateAccessRequest'];
export type SimulatedEntry = Generated['deltas'][number] & { condition?: WireCondition };
export type SimulateAnswer = Omit<Generated, 'deltas'> & {
  deltas: SimulatedEntry[];
  delegationDeltas?: DelegationEntry[];
};
export type SimulatedChange = SimulateRequest['changes'][number];

/** Asks the server what `body`'s change set would do to access; nothing is changed. */
export function simulate(s: Session, body: SimulateRequest): Promise<SimulateAnswer> {
  return call<SimulateAnswer>(s, 'POST', '/iam/v2beta1/access:simulate', { body });
}

/** A reference as the caller may read it: its path, else its name, else its uid. */
export const refText = (r: { uid: string; name: string; path: string }): string =>
  r.path || r.name || r.uid;

/** `v` as a condition, when it is one (a manifest's body, an answer's entry). */
export function conditionOf(v: unknown): WireCondition | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const c = v as Record<string, unknown>;
  if (typeof c.expression !== 'string') return undefined;
  return {
    expression: c.expression,
    ...(typeof c.title === 'string' && c.title !== '' ? { title: c.title } : {}),
    ...(typeof c.description === 'string' ? { description: c.description } : {}),
  };
}

/** A condition in words: its title where it has one, else its expression. */
export const conditionWords = (c: WireCondition): string => c.title ?? c.expression;

/**
 * One entry in words: "ci loses 21 capabilities in acme/platform" (one capability is
 * named), the identity by name (its uid where the caller may not read it); a conditional
 * entry ends "when <its title or expression>".
 */
export function entryWords(e: SimulatedEntry): string {
  const n = e.capabilities.length;
  const what = n === 1 ? e.capabilities[0]! : `${n} capabilities`;
  const when = e.condition ? ` when ${conditionWords(e.condition)}` : '';
  return `${e.identity.name || e.identity.uid} ${e.effect === 'GAIN' ? 'gains' : 'loses'} ${what} in ${refText(e.group)}${when}`;
}

const allowedWords = (a: WireAllowed): string =>
  `${a.capabilities.join(', ')} at most, ${a.maxLifetimeSeconds}s per delegation`;

/**
 * A delegation entry in words, signed like the plan's lines: "+ ci may act for deployer
 * (repo.list at most, 900s per delegation)", "- …may no longer act for…", "~ …(was …)".
 */
export function delegationWords(d: DelegationEntry): string {
  const actor = refText(d.actor);
  const subject = refText(d.subject);
  if (d.effect === 'GAIN') return `+ ${actor} may act for ${subject} (${allowedWords(d.after!)})`;
  if (d.effect === 'LOSE') return `- ${actor} may no longer act for ${subject}`;
  return `~ ${actor} may act for ${subject} with ${allowedWords(d.after!)} (was ${allowedWords(d.before!)})`;
}
