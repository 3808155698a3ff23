import { stringify } from 'yaml';
import { call, openSession, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { parseDuration } from './duration.js';
import { resolveUid } from './name-resolver.js';
import { approvalDelta, confirmed, requestSentence, type AccessRequest } from './request-words.js';

type Opts = Record<string, unknown>;
type Item = Record<string, unknown>;

const PATH = '/iam/v2beta1/accessRequests';

/** A field of an answer as text: strings and numbers as they are, anything else empty. */
const text = (v: unknown): string =>
  typeof v === 'string' || typeof v === 'number' ? String(v) : '';

function print(o: Opts, item: Item, line: string): void {
  if (o.output === 'json') process.stdout.write(`${JSON.stringify(item, null, 2)}\n`);
  else if (o.output === 'yaml') process.stdout.write(stringify(item));
  else if (o.output === 'name') process.stdout.write(`${text(item.uid)}\n`);
  else process.stdout.write(`${line}\n`);
}

const seconds = (text: string, flag: string) => Math.round(parseDuration(text, flag) / 1000);

/** `arbor request ROLE --group G --for D --reason R [--from D | --not-before T]`. */
export async function request(args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const group = await resolveUid(s, 'groups', o.group as string);
  const role = await resolveUid(s, 'roles', args[0] as string, group);
  if (o.from !== undefined && o.notBefore !== undefined)
    throw new CliError('give --from or --not-before, not both', EXIT.USAGE);
  const notBefore =
    typeof o.from === 'string'
      ? new Date(Date.now() + parseDuration(o.from, '--from')).toISOString()
      : (o.notBefore as string | undefined);
  const r = await call<Item>(s, 'POST', `${PATH}/{uid}`, {
    params: { path: { uid: group } },
    body: {
      roleUid: role,
      durationSeconds: seconds(o.for as string, '--for'),
      reason: o.reason as string,
      ...(notBefore === undefined ? {} : { notBefore }),
    },
  });
  print(o, r, `requested: ${text(r.uid)} (${text(r.approvalsRequired)} approval(s) needed)`);
  return EXIT.OK;
}

async function decide(verb: string, args: unknown[], o: Opts): Promise<number> {
  const s: Session = await openSession(o.api as string | undefined);
  if (verb !== 'cancel') {
    // Shown before anything is decided: who asks for what where, and what approving grants.
    const asked = await call<AccessRequest>(s, 'GET', `${PATH}/{uid}`, {
      params: { path: { uid: args[0] as string } },
    });
    process.stderr.write(`${requestSentence(asked)}\n`);
    process.stderr.write(`Approving it would change access:\n`);
    process.stderr.write(`${(await approvalDelta(s, asked)).join('\n')}\n`);
    const question = verb === 'approve' ? 'Approve' : 'Deny';
    if (!(await confirmed(question, o.yes === true))) {
      process.stderr.write('Nothing was done.\n');
      return EXIT.FAILURE;
    }
  }
  const r = await call<Item>(s, 'POST', `${PATH}:${verb}`, {
    body: {
      uid: args[0] as string,
      ...(typeof o.reason === 'string' ? { reason: o.reason } : {}),
    },
  });
  const approvals = (r.approvals as unknown[] | undefined)?.length ?? 0;
  const binding = r.bindingUid ? `, binding ${text(r.bindingUid)}` : '';
  print(
    o,
    r,
    `${text(r.uid)}: ${text(r.state)} (${approvals}/${text(r.approvalsRequired)} approvals${binding})`,
  );
  return EXIT.OK;
}

/** `arbor requests show ID`: the request as a sentence, and what approving it grants. */
export async function show(args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const r = await call<AccessRequest>(s, 'GET', `${PATH}/{uid}`, {
    params: { path: { uid: args[0] as string } },
  });
  const delta = r.state === 'PENDING' ? await approvalDelta(s, r) : [];
  const more = delta.length > 0 ? `\nApproving it would change access:\n${delta.join('\n')}` : '';
  print(o, r as unknown as Item, `${requestSentence(r)}${more}`);
  return EXIT.OK;
}

export const approve = (args: unknown[], o: Opts) => decide('approve', args, o);
export const deny = (args: unknown[], o: Opts) => decide('deny', args, o);
export const cancel = (args: unknown[], o: Opts) => decide('cancel', args, o);

/** `arbor requests policy --group G [--approvals N] [--timeout D]`. */
export async function policy(_args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const groupUid = await resolveUid(s, 'groups', o.group as string);
  const setting = o.approvals !== undefined || o.timeout !== undefined;
  if (setting && o.approvals === undefined)
    throw new CliError('--timeout is set together with --approvals', EXIT.USAGE);
  if (setting && !/^\d+$/.test(String(o.approvals)))
    throw new CliError('--approvals takes a whole number, 1 to 10', EXIT.USAGE);
  const r = await call<Item>(s, 'POST', `${PATH}:${setting ? 'setPolicy' : 'getPolicy'}`, {
    body: setting
      ? {
          groupUid,
          approvals: Number(o.approvals),
          ...(typeof o.timeout === 'string'
            ? { timeoutSeconds: seconds(o.timeout, '--timeout') }
            : {}),
        }
      : { groupUid },
  });
  const from = r.groupUid ? `set at ${text(r.groupUid)}` : 'the defaults';
  print(o, r, `approvals: ${text(r.approvals)}, timeout: ${text(r.timeoutSeconds)}s (${from})`);
  return EXIT.OK;
}
