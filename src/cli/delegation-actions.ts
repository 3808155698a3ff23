import { stringify } from 'yaml';
import { call, openSession, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { durationText, parseDuration } from './duration.js';
import { NameBook } from './name-book.js';
import { resolveUid } from './name-resolver.js';

type Opts = Record<string, unknown>;

interface Policy {
  identityUid: string;
  actors: string[];
  capabilities: string[];
  maxLifetimeSeconds: number;
  setBy: string;
  updateTime: string;
}

const GET = '/iam/v2beta1/identities:getDelegationPolicy';
const SET = '/iam/v2beta1/identities:setDelegationPolicy';

/** `--max-lifetime`: whole seconds; the API bounds it (60 s to 24 h) and says so. */
function lifetimeSeconds(text: string): number {
  const ms = parseDuration(text, '--max-lifetime');
  if (ms % 1000 !== 0) throw new CliError('--max-lifetime takes whole seconds', EXIT.USAGE);
  return ms / 1000;
}

async function print(s: Session, o: Opts, p: Policy): Promise<void> {
  if (o.output === 'json') return void process.stdout.write(`${JSON.stringify(p, null, 2)}\n`);
  if (o.output === 'yaml') return void process.stdout.write(stringify(p));
  const names = new NameBook(s);
  const [identity, actors] = await Promise.all([
    names.identityPath(p.identityUid),
    Promise.all(p.actors.map((a) => names.identityPath(a))),
  ]);
  const lines = [
    `identity:      ${identity}`,
    `actors:        ${actors.join(', ')}`,
    `capabilities:  ${p.capabilities.join(', ')}`,
    `max lifetime:  ${durationText(p.maxLifetimeSeconds)}`,
    `set by:        ${await names.actor(p.setBy.includes(':') || p.setBy === 'admin' ? p.setBy : `identity:${p.setBy}`)}`,
    `updated:       ${p.updateTime}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `arbor identities delegation-policy get <identity>`. */
export async function get(args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const identityUid = await resolveUid(s, 'identities', args[0] as string);
  await print(s, o, await call<Policy>(s, 'POST', GET, { body: { identityUid } }));
  return EXIT.OK;
}

/** `arbor identities delegation-policy set <identity> --actor A --capabilities C [--max-lifetime D]`. */
export async function set(args: unknown[], o: Opts): Promise<number> {
  // Usage errors before any call.
  const maxLifetimeSeconds =
    typeof o.maxLifetime === 'string' ? lifetimeSeconds(o.maxLifetime) : undefined;
  const wanted = (o.actor as string[] | undefined) ?? [];
  const capabilities = (o.capabilities as string[] | undefined) ?? [];
  // The API would read no actors as a removal: that is `clear`, said out loud.
  if (wanted.length === 0)
    throw new CliError(
      '--actor names at least one identity (clear removes the policy)',
      EXIT.USAGE,
    );
  if (capabilities.length === 0)
    throw new CliError('--capabilities names at least one capability', EXIT.USAGE);
  const s = await openSession(o.api as string | undefined);
  const identityUid = await resolveUid(s, 'identities', args[0] as string);
  const actors = await Promise.all(wanted.map((a) => resolveUid(s, 'identities', a)));
  const p = await call<Policy>(s, 'POST', SET, {
    body: {
      identityUid,
      actors,
      capabilities,
      ...(maxLifetimeSeconds === undefined ? {} : { maxLifetimeSeconds }),
    },
  });
  await print(s, o, p);
  return EXIT.OK;
}

/** `arbor identities delegation-policy clear <identity>`: NOT_FOUND when it has none. */
export async function clear(args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const name = args[0] as string;
  const identityUid = await resolveUid(s, 'identities', name);
  await call(s, 'POST', SET, { body: { identityUid, actors: [] } });
  process.stdout.write(`removed the delegation policy of ${name}\n`);
  return EXIT.OK;
}
