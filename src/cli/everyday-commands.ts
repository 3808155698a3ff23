import type { Command } from 'commander';
import { registerAccessCommands } from './access-commands.js';
import { apiUrlOption, outputOption, registerResourceCommands } from './resource-commands.js';

/**
 * The commands people use every day over the API (like `kubectl get`): one per resource
 * kind, `tree`, `whoami`, `can-i`, `who-can`, `identities test-token`, and the hidden `__complete` that shell completion asks for uids.
 * Each action loads its module only when run.
 */
export function registerEverydayCommands(program: Command): void {
  registerResourceCommands(program);
  registerAccessCommands(program);

  program
    .command('tree')
    .description('draw the groups you can see as a tree, with what each one holds')
    .argument('[group]', 'start at this group (default: every organization you can see)')
    .option('--uids', 'show each group’s uid')
    .addOption(apiUrlOption())
    .action(async (group: string | undefined, opts: { api?: string; uids?: boolean }) => {
      const { treeCommand } = await import('./tree-command.js');
      await treeCommand(group, opts);
    });

  program
    .command('whoami')
    .description('who the current token is: its identity, its role bindings, its expiry')
    .addOption(outputOption().choices(['table', 'json', 'yaml']))
    .addOption(apiUrlOption())
    .action(async (opts: { api?: string; output?: string }) => {
      const { whoamiCommand } = await import('./whoami-command.js');
      await whoamiCommand(opts);
    });

  program
    .command('__complete', { hidden: true })
    .argument('<kind>', 'groups or roles')
    .action(async (kind: string) => {
      const { completeUids } = await import('./complete-uids.js');
      await completeUids(kind);
    });
}
