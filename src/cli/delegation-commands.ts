import { Option, type Command } from './commander.js';
import { apiUrlOption } from './resource-commands.js';

type Opts = Record<string, unknown>;

/** Every action loads the module that calls the API only when run: help loads nothing. */
const act =
  (name: 'get' | 'set' | 'clear') =>
  async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const actions = await import('./delegation-actions.js');
    process.exitCode = await actions[name](cmd.processedArgs as unknown[], cmd.opts<Opts>());
  };

/** A repeatable flag that also takes comma-separated values (`--actor a --actor b,c`). */
const collect = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== ''),
];

const outputOption = () =>
  new Option('-o, --output <format>', 'output format')
    .choices(['table', 'json', 'yaml'])
    .default('table');

/**
 * `arbor identities delegation-policy get|set|clear <identity>`: who may act for an identity
 * at the token endpoint (docs/oauth.md, Delegation), over `identities:getDelegationPolicy`
 * and `:setDelegationPolicy`. Each takes identity.update on the identity.
 */
export function registerDelegationCommands(program: Command): void {
  const identities = program.commands.find((c) => c.name() === 'identities');
  if (!identities) throw new Error('the identities command must be registered first');
  const policy = identities
    .command('delegation-policy')
    .description('who may act for an identity (token exchange with actor_token), and how far');
  policy
    .command('get')
    .description("show an identity's delegation policy")
    .argument('<identity>', 'a uid or a path of names (acme/ci)')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('get'));
  policy
    .command('set')
    .description("set (replace) an identity's delegation policy")
    .argument('<identity>', 'the identity acted for: a uid or a path of names')
    .requiredOption(
      '--actor <identity>',
      'an identity that may act for it (repeat, or comma-separate; at most 32)',
      collect,
    )
    .requiredOption(
      '--capabilities <names>',
      'at most these capabilities (comma-separated or repeated), e.g. repo.list,repo.blobs.get',
      collect,
    )
    .option('--max-lifetime <duration>', 'a delegation lasts at most this long: 1m to 24h (1h)')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('set'));
  policy
    .command('clear')
    .description("remove an identity's delegation policy: its delegated tokens hold nothing more")
    .argument('<identity>', 'a uid or a path of names')
    .addOption(apiUrlOption())
    .action(act('clear'));
}
