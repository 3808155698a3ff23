import { Option, type Command } from './commander.js';
import { registerAccessCommands } from './access-commands.js';
import { registerDelegationCommands } from './delegation-commands.js';
import { registerRequestCommands } from './request-commands.js';
import { registerReviewCommands } from './review-commands.js';
import { apiUrlOption, outputOption, registerResourceCommands } from './resource-commands.js';
import { registerSimulateCommand } from './simulate-commands.js';

/**
 * The commands people use every day over the API (like `kubectl get`): one per resource
 * kind, `tree`, `whoami`, `can-i`, `who-can`, `what-can`, `identities test-token`,
 * `identities delegation-policy`, `audit`, `capabilities`, `version`, and the hidden
 * `__complete` that shell completion asks for uids. Each action loads its module only when run.
 */
export function registerEverydayCommands(
  program: Command,
  wantedKind: (command: string) => boolean,
): void {
  registerResourceCommands(program, wantedKind);
  registerAccessCommands(program);
  registerDelegationCommands(program);
  registerRequestCommands(program);
  registerReviewCommands(program);
  registerSimulateCommand(program);

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
    .command('audit')
    .description('the audit trail: who changed what, when (newest first), with names beside uids')
    .argument('[resource]', 'only the events of this object (its uid)')
    .option('--subtree <group>', 'only events of what lies below this group (not the group itself)')
    .option('--actor <actor>', 'only this actor: an identity uid, admin, or system:<name>')
    .addOption(
      new Option('--operation <op>', 'only this operation').choices(['create', 'update', 'delete']),
    )
    .option('--kind <kind>', 'only this kind of resource: Group, Identity, RoleBinding, …')
    .option('--door <door>', 'only what came in here: rest, grpc, reconciler, sts, cli or system')
    .option('--since <time>', 'from this time (RFC 3339) or this long ago (2h, 7d)')
    .option('--until <time>', 'until this time (RFC 3339) or this long ago')
    .option('--oldest-first', 'oldest first instead of newest first')
    .option('--page-size <n>', 'events per page (the API caps it at 200)')
    .option('--page-token <token>', 'continue where the last page ended')
    .option('--all', 'follow nextPageToken to the end and print every page')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(async (resource: string | undefined, opts: Record<string, unknown>) => {
      const { auditCommand } = await import('./audit-actions.js');
      process.exitCode = await auditCommand([resource], opts);
    });

  program
    .command('capabilities')
    .description('every capability a role can carry, with what it allows')
    .addOption(
      new Option('-o, --output <format>', 'output format').choices(['table', 'name', 'json']),
    )
    .action(async (opts: { output?: string }) => {
      const { capabilitiesCommand } = await import('./info-commands.js');
      capabilitiesCommand(opts.output ?? 'table');
    });

  program
    .command('version')
    .description('print the version of this arbor and of Node.js')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']))
    .action(async (opts: { output?: string }) => {
      const { versionCommand } = await import('./info-commands.js');
      versionCommand(opts.output ?? 'text');
    });

  program
    .command('__complete', { hidden: true })
    .argument('<kind>', 'groups or roles')
    .action(async (kind: string) => {
      const { completeUids } = await import('./complete-uids.js');
      await completeUids(kind);
    });
}
