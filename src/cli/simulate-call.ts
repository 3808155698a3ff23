import type { components } from '../client/index.js';
import { call, type Session } from './api-session.js';

/** `access:simulate`'s request, answer and their parts, as the typed client has them. */
export type SimulateRequest = components['schemas']['SimulateAccessRequest'];
export type SimulateAnswer = components['schemas']['SimulateAccessResponse'];
export type SimulatedChange = SimulateRequest['changes'][number];
export type SimulatedEntry = SimulateAnswer['deltas'][number];

/** Asks the server what `body`'s change set would do to access; nothing is changed. */
export function simulate(s: Session, body: SimulateRequest): Promise<SimulateAnswer> {
  return call<SimulateAnswer>(s, 'POST', '/iam/v2beta1/access:simulate', { body });
}

/** A reference as the caller may read it: its path, else its name, else its uid. */
export const refText = (r: { uid: string; name: string; path: string }): string =>
  r.path || r.name || r.uid;

/**
 * One entry in words: "ci loses 21 capabilities in acme/platform" (one capability is
 * named), the identity by name (its uid where the caller may not read it).
 */
export function entryWords(e: SimulatedEntry): string {
  const n = e.capabilities.length;
  const what = n === 1 ? e.capabilities[0]! : `${n} capabilities`;
  return `${e.identity.name || e.identity.uid} ${e.effect === 'GAIN' ? 'gains' : 'loses'} ${what} in ${refText(e.group)}`;
}
