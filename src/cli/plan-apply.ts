import { callForEtag, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { API_OF } from './plan-server.js';
import type { Plan, PlanChange } from './plan-types.js';

/** The server changed under a plan: nothing further is written (exit 5, as ABORTED). */
export function moved(why: string): CliError {
  return new CliError(
    `the server changed since the plan was made (${why}); nothing more was applied`,
    EXIT.CONFLICT,
    ['  run arbor plan again, review it, and apply that plan'],
  );
}

/** A uid the plan names directly, or the one an earlier create of the apply made. */
function uidFor(made: Map<string, string>, object: string): string {
  const uid = made.get(object);
  if (uid === undefined) throw new CliError(`${object} was to be created first`, EXIT.FAILURE);
  return uid;
}

/** One change, as one API call; updates and deletes send the plan's ETag as If-Match. */
async function applyOne(s: Session, c: PlanChange, made: Map<string, string>): Promise<string> {
  const api = API_OF[c.kind];
  if (c.action === 'create') {
    const parent = c.parentObject ? uidFor(made, c.parentObject) : c.parentUid;
    const body = { ...c.body };
    for (const [field, object] of Object.entries(c.refs ?? {})) body[field] = uidFor(made, object);
    const { data } =
      parent === undefined
        ? await callForEtag<{ uid: string }>(s, 'POST', api.path, { body })
        : await callForEtag<{ uid: string }>(s, 'POST', `${api.path}/{uid}`, {
            params: { path: { uid: parent } },
            body,
          });
    if (c.object) made.set(c.object, data.uid);
    return data.uid;
  }
  const uid = c.uid!;
  const headers = c.etag ? { 'if-match': c.etag } : undefined;
  if (c.action === 'update') {
    await callForEtag(s, 'PATCH', `${api.path}/{uid}`, {
      params: { path: { uid }, query: { updateMask: Object.keys(c.body ?? {}).join(',') } },
      body: c.body,
      ...(headers ? { headers } : {}),
    });
    if (c.object) made.set(c.object, uid);
  } else {
    await callForEtag(s, 'DELETE', `${api.path}/{uid}`, {
      params: { path: { uid } },
      ...(headers ? { headers } : {}),
    });
  }
  return uid;
}

const PAST = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/**
 * Makes the writes of `plan`, in its order, each reported on `say` as it lands. A write
 * refused because the resource changed since the plan read it (If-Match) stops the apply:
 * what was written before stays, and the error says so.
 * @throws CliError: exit 5 when the server moved, else the failing call's code.
 */
export async function applyPlan(
  s: Session,
  plan: Pick<Plan, 'changes'>,
  say: (line: string) => void,
): Promise<Record<'created' | 'updated' | 'deleted', number>> {
  const made = new Map<string, string>();
  const done = { created: 0, updated: 0, deleted: 0 };
  for (const c of plan.changes) {
    let uid: string;
    try {
      uid = await applyOne(s, c, made);
    } catch (e) {
      if (e instanceof CliError && /If-Match does not match/.test(e.message))
        throw moved(`${c.kind} ${c.uid ?? ''} was written by someone else`);
      if (e instanceof CliError) {
        const before = done.created + done.updated + done.deleted;
        throw new CliError(
          `${c.action} ${c.object ?? `${c.kind} ${c.uid}`}: ${e.message}`,
          e.exitCode,
          [
            ...e.details,
            `  ${before} change(s) before it were applied; run arbor plan to see what remains`,
          ],
        );
      }
      throw e;
    }
    done[PAST[c.action]]++;
    say(`${PAST[c.action]} ${c.object ?? c.kind} ${uid}\n`);
  }
  return done;
}
