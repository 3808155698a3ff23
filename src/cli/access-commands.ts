import { Option, type Command } from './commander.js';
import { repeat } from './argv-command.js';
import { apiUrlOption, outputOption } from './resource-commands.js';

type Opts = Record<string, unknown>;

/** Every action loads the module that calls the API only when run: help loads nothing. */
const act =
  (name: 'canI' | 'whoCan' | 'whatCan' | 'testToken') =>
  async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const actions = await import('./access-actions.js');
    process.exitCode = await actions[name](cmd.processedArgs as unknown[], cmd.opts<Opts>());
  };

/** The request a check asks about: conditional bindings are evaluated with it. */
function askedRequestOptions(cmd: Command): void {
  cmd
    .option(
      '--resource-type <type>',
      'the request asked about: resource.type for conditional bindings (e.g. repository)',
    )
    .option(
      '--resource-name <name>',
      'the request asked about: resource.name for conditional bindings (e.g. a repository path)',
    )
    .option(
      '--claim <name=value>',
      'the request asked about: a token claim (a string) for conditional bindings (repeatable)',
      repeat,
    );
}

/**
 * `arbor can-i`, `arbor who-can` and `arbor identities test-token`: the access questions
 * (check with a proof, who-can, the claim tester) from a terminal or a script.
 */
export function registerAccessCommands(program: Command): void {
  const canI = program
    .command('can-i')
    .description('may you (or --as an identity) use a capability at a group? prints yes or no')
    .argument('<capability>', 'a capability, e.g. groups.list')
    .requiredOption('--group <group>', 'the group asked about: a uid or a path of names')
    .option(
      '--as <identity>',
      'ask about this identity (a uid, or group path and name) instead of yourself',
    )
    .option('--explain', 'when yes, show the bindings that grant it and how they reach the group')
    .addOption(
      new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml']),
    )
    .addOption(apiUrlOption())
    .addHelpText('after', '\nExit status: 0 for yes, 1 for no; failures as for every command.')
    .action(act('canI'));
  askedRequestOptions(canI);

  program
    .command('who-can')
    .description('the identities holding a capability at a group, with their granting bindings')
    .argument('<capability>', 'a capability, e.g. groups.delete')
    .requiredOption('--group <group>', 'the group asked about: a uid or a path of names')
    .option('--order-by <order>', 'uid, optionally followed by " desc"')
    .option('--page-size <n>', 'identities per page (the API caps it at 200)')
    .option('--page-token <token>', 'continue where the last page ended')
    .option('--all', 'follow nextPageToken to the end and print every page')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('whoCan'));

  program
    .command('what-can')
    .description('what an identity (default: you) holds, group by group, and the roles bound there')
    .option('--as <identity>', 'ask about this identity instead of yourself')
    .option('--page-size <n>', 'groups per page (the API caps it at 200)')
    .option('--page-token <token>', 'continue where the last page ended')
    .option('--all', 'follow nextPageToken to the end and print every page')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('whatCan'));

  const identities = program.commands.find((c) => c.name() === 'identities');
  if (!identities) throw new Error('the identities command must be registered first');
  identities
    .command('test-token')
    .description(
      'would a token (or claims) assume an identity? each clause, with why; nothing is issued or recorded',
    )
    .argument('[identity]', 'the identity (default: every claim-match identity you can see)')
    .option(
      '--token-file <path>',
      'a JWT in a file (- for standard input); its signature is checked too',
    )
    .option('--claims-file <path>', 'a JSON or YAML object of claims (- for standard input)')
    .option('--page-size <n>', 'without an identity: identities per page (at most 200)')
    .option('--page-token <token>', 'without an identity: continue where the last page ended')
    .addOption(
      new Option('-o, --output <format>', 'output format')
        .choices(['table', 'json', 'yaml'])
        .default('table'),
    )
    .addOption(apiUrlOption())
    .addHelpText(
      'after',
      '\nExit status: 0 when the token would assume the identity (any of them), 1 when not.',
    )
    .action(act('testToken'));

  program
    .command('access')
    .description('access findings')
    .command('unused')
    .description(
      'bindings that granted nothing and identities that did not sign in for a window; --expire-in expires them',
    )
    .option('--group <group>', 'only at or below this group: a uid or a path of names')
    .option('--window <days>', 'unused for this long: 1d to 365d (default 90d)')
    .addOption(new Option('--kind <kind>', 'one kind only').choices(['roleBinding', 'identity']))
    .option(
      '--expire-in <duration>',
      'set every binding found (an identity: each of its bindings) to expire this far from now, e.g. 30d',
    )
    .option('--page-size <n>', 'findings per page (the API caps it at 200)')
    .option('--page-token <token>', 'continue where the last page ended')
    .option('--all', 'follow nextPageToken to the end and print every page')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const { accessUnused } = await import('./unused-actions.js');
      process.exitCode = await accessUnused([], cmd.opts<Opts>());
    });
}
