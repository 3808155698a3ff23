import type { Command } from 'commander';
import { apiUrlOption, outputOption } from './resource-commands.js';
import type { SimulateOptions } from './simulate-command.js';

/** `arbor simulate`: its module (which calls the API) is loaded only when it runs. */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description(
      'what one change would do to access, per identity and group (nothing is changed): ' +
        '"ci loses 21 capabilities in acme/platform"',
    )
    .option('--bind <identity>', 'bind IDENTITY (a uid or a path of names) --role R --group G')
    .option('--unbind <identity>', "remove IDENTITY's binding of --role R at --group G")
    .option('--role <role>', 'the role to bind or unbind: a name or a uid')
    .option('--group <group>', 'where: a uid or a path of names')
    .option('--delete-identity <identity>', 'delete an identity, with its bindings')
    .option('--delete-group <group>', 'delete a group, with everything below it')
    .option(
      '--role-capabilities <role=caps>',
      "replace a custom role's capabilities: ROLE=cap1,cap2",
    )
    .option('--explain', 'show the grants before and after that prove each line')
    .addOption(outputOption().choices(['table', 'json', 'yaml']))
    .addOption(apiUrlOption())
    .action(async (o: SimulateOptions) => {
      const { simulateCommand } = await import('./simulate-command.js');
      process.exitCode = await simulateCommand(o);
    });
}
