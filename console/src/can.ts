import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { get, post } from './api';
import { getToken, tokenSubject } from './auth';
import { useLoad } from './ui';

/**
 * What the console offers is what the caller may do: one `access:batchCheck` per page asks
 * every capability the page's actions need, at the page's group, about the caller itself.
 * Hiding is a courtesy, never the guard: the API decides every request again.
 */
export type Can = (capability: string) => boolean;

const EVERYTHING: Can = () => true;
const NOTHING: Can = () => false;

/**
 * The admin token (and any token that is no identity's, which a self check cannot ask
 * about) holds every capability: everything is offered, as the server will allow it.
 */
export function isAdminToken(): boolean {
  return tokenSubject(getToken() ?? '') === undefined;
}

/** The capabilities any group page asks about (at most 100: batchCheck's limit). */
export const GROUP_PAGE_CAPABILITIES = [
  'groups.create',
  'groups.update',
  'groups.delete',
  'identity.list',
  'identity.create',
  'identity.delete',
  'role_bindings.list',
  'role_bindings.create',
  'role_bindings.update',
  'role_bindings.delete',
  'repo.list',
  'repo.create',
  'repo.delete',
  'tag.list',
  'tag.delete',
  'identity_providers.list',
  'identity_providers.create',
  'identity_providers.delete',
  'group_invites.list',
  'group_invites.create',
  'group_invites.delete',
  'subscriptions.list',
  'subscriptions.create',
  'subscriptions.delete',
  'audit.list',
] as const;

interface BatchAnswer {
  results: Array<{ allowed: boolean }>;
}

/**
 * One batch check of `capabilities` at `groupUid` for the caller. Undefined while the
 * answer is out (nothing is offered meanwhile). If the check itself fails, everything is
 * offered: the API still refuses what the caller lacks, in its own words.
 */
export function usePermissions(groupUid: string, capabilities: readonly string[]): Can | undefined {
  const admin = isAdminToken();
  const answer = useLoad(async () => {
    if (admin || !groupUid) return new Set<string>();
    const r = await post<BatchAnswer>('/iam/v2beta1/access:batchCheck', {
      checks: capabilities.map((capability) => ({ capability, groupUid })),
    });
    return new Set(capabilities.filter((_, i) => r.results[i]?.allowed === true));
  }, [groupUid, capabilities.join(',')]);
  if (admin) return EVERYTHING;
  if (answer.error !== undefined) return EVERYTHING;
  if (answer.loading || answer.data === undefined) return undefined;
  const allowed = answer.data;
  return (c) => allowed.has(c);
}

/** The page's answer, for the sections and forms inside it. */
export const CanContext = createContext<Can>(NOTHING);

export function useCan(): Can {
  return useContext(CanContext);
}

/** `can(capability, groupUid)`: the caller's answer at one group of a list's page. */
export type CanAt = (capability: string, groupUid: string) => boolean;

/** batchCheck's limit on the checks of one call. */
const BATCH_LIMIT = 100;

/**
 * The batch check of a list page whose rows sit at several groups (an inbox, findings):
 * every distinct (capability, group) of the page asked at once, about the caller itself
 * (one call, or one per 100 checks). Undefined while out; the admin token and a failed
 * check offer everything, as `usePermissions` does.
 */
export function usePermissionsAt(
  checks: ReadonlyArray<{ capability: string; groupUid: string }>,
): CanAt | undefined {
  const admin = isAdminToken();
  const keys = [...new Set(checks.map((c) => `${c.capability} ${c.groupUid}`))].sort();
  const answer = useLoad(async () => {
    const allowed = new Set<string>();
    if (admin) return allowed;
    for (let i = 0; i < keys.length; i += BATCH_LIMIT) {
      const part = keys.slice(i, i + BATCH_LIMIT).map((k) => {
        const [capability = '', groupUid = ''] = k.split(' ');
        return { capability, groupUid };
      });
      const r = await post<BatchAnswer>('/iam/v2beta1/access:batchCheck', { checks: part });
      part.forEach((c, j) => {
        if (r.results[j]?.allowed === true) allowed.add(`${c.capability} ${c.groupUid}`);
      });
    }
    return allowed;
  }, [keys.join('\n')]);
  if (admin || answer.error !== undefined) return () => true;
  if (answer.loading || answer.data === undefined) return undefined;
  const allowed = answer.data;
  return (capability, groupUid) => allowed.has(`${capability} ${groupUid}`);
}

/** The caller's own identity uid; undefined for the admin token. */
export function myUid(): string | undefined {
  return tokenSubject(getToken() ?? '');
}

interface WhatCanAnswer {
  groups: Array<{ capabilities?: string[]; effectiveCapabilities?: string[] }>;
  nextPageToken?: string;
}

/** The answer for the token it was asked with: one question per sign-in, not per page. */
let auditAnswer: { token: string; readable: Promise<boolean> } | undefined;

/**
 * May the caller read the audit trail anywhere? A caller who may not is offered no Audit
 * link (it would lead to "0 changes you can see"). Asked once per token: one page of
 * `access:whatCan` about the caller itself, every group it is bound at with what it holds
 * there. Where that page is not the whole answer, or the question fails, the link is
 * offered: the audit API decides what it shows.
 */
function auditReadable(token: string): Promise<boolean> {
  if (auditAnswer?.token !== token)
    auditAnswer = {
      token,
      readable: get<WhatCanAnswer>('/iam/v2beta1/access:whatCan?page_size=200').then(
        (r) =>
          r.nextPageToken !== undefined ||
          r.groups.some(
            (g) =>
              g.capabilities?.includes('audit.list') === true ||
              g.effectiveCapabilities?.includes('audit.list') === true,
          ),
        () => true,
      ),
    };
  return auditAnswer.readable;
}

/** `auditReadable` as a hook: false while the answer is out (nothing offered meanwhile). */
export function useAuditReadable(): boolean {
  const token = getToken() ?? '';
  const admin = isAdminToken();
  const answer = useLoad(
    () => (admin ? Promise.resolve(true) : auditReadable(token)),
    [token, admin],
  );
  return admin || answer.data === true;
}
