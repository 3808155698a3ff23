import type { components } from '../client/index.js';
import { CliError, EXIT } from './cli-errors.js';
import type { Session } from './api-session.js';
import { durationText } from './duration.js';
import { entryWords, simulate } from './simulate-call.js';

export type AccessRequest = components['schemas']['AccessRequest'];

/**
 * A request as a sentence: "acme/platform/ci asks for owner in acme/platform for 8h from
 * approval, because: deploy fix (approvals 0 of 2, PENDING)". Names and paths are the
 * server's, as far as the caller may see them; uids otherwise.
 */
export function requestSentence(r: AccessRequest): string {
  const from = r.notBefore ? `from ${r.notBefore}` : 'from approval';
  const n = r.approvals.length;
  return (
    `${r.requesterPath ?? r.requesterUid} asks for ${r.rolePath ?? r.roleUid} in ` +
    `${r.groupPath ?? r.groupUid} for ${durationText(r.durationSeconds)} ${from}, because: ` +
    `${r.reason} (approvals ${n} of ${r.approvalsRequired}, ${r.state})`
  );
}

/**
 * What approving `r` would do to access, in lines (the server's access:simulate; the
 * requester by the request's `requesterPath` where the delta leaves it unnamed).
 */
export async function approvalDelta(s: Session, r: AccessRequest): Promise<string[]> {
  const a = await simulate(s, {
    changes: [
      {
        createRoleBinding: {
          groupUid: r.groupUid,
          identityUid: r.requesterUid,
          roleUid: r.roleUid,
          ...(r.notBefore ? { notBefore: r.notBefore } : {}),
        },
      },
    ],
    pageSize: 50,
  });
  // The requester, whom the delta leaves unnamed where the approver may not list it, by the
  // path the request names it with (a folder's owner deciding for an organization's person).
  const lines = a.deltas.map(
    (e) =>
      `  ${entryWords(
        e.identity.name || e.identity.uid !== r.requesterUid || !r.requesterPath
          ? e
          : { ...e, identity: { ...e.identity, name: r.requesterPath } },
      )}`,
  );
  if (lines.length === 0) lines.push('  no access changes that you may see');
  const more = Number(a.totalCount) - a.deltas.length;
  if (more > 0) lines.push(`  … and ${more} more`);
  return lines;
}

/**
 * Asks "Approve? [y/N]" on the terminal; `--yes` skips it. Without a terminal and without
 * `--yes` it refuses rather than wait for an answer that cannot come.
 * @throws CliError USAGE without a terminal and without --yes.
 */
export async function confirmed(question: string, yes: boolean): Promise<boolean> {
  if (yes) return true;
  if (process.stdin.isTTY !== true)
    throw new CliError(
      `not a terminal: nothing was done; run again with --yes to ${question.toLowerCase()} without asking`,
      EXIT.USAGE,
    );
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
