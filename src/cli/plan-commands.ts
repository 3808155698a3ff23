import { Option, type Command } from './commander.js';
import { apiUrlOption } from './resource-commands.js';
import type { PlanOpts } from './plan-command.js';

const fileOption = () =>
  new Option(
    '-f, --file <dir>',
    'a directory (any depth) or file of Group, Identity and RoleBinding manifests',
  );
const pruneOption = () =>
  new Option(
    '--prune',
    'also delete what the manifests no longer name below the groups they declare',
  );
const jsonOption = () =>
  new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table');

/**
 * `arbor plan` and `arbor apply`: a directory of arbor.dev manifests against the server,
 * reviewed as a plan (field diff and access delta) and applied exactly as reviewed.
 */
export function registerPlanCommands(program: Command): void {
  program
    .command('plan')
    .description('what applying the manifests would change in Arbor: per object, and in access')
    .addOption(fileOption())
    .addOption(pruneOption())
    .addOption(jsonOption())
    .option('--out <file>', 'also write the plan to this file, for arbor apply --plan')
    .addOption(apiUrlOption())
    .addHelpText(
      'after',
      '\nExit status (as terraform plan -detailed-exitcode): 0 no changes, 2 changes, 1 failed.',
    )
    .action(async (o: PlanOpts) => {
      process.exitCode = await (await import('./plan-command.js')).planCommand(o);
    });

  program
    .command('apply')
    .description(
      'apply the manifests (or a saved plan) exactly as planned; refuses if Arbor moved since',
    )
    .addOption(fileOption())
    .addOption(pruneOption())
    .option('--plan <file>', 'apply the plan arbor plan --out wrote, if it still holds')
    .option(
      '--token <token>',
      'apply only if the plan made now has this token (with --plan: and the file holds it)',
    )
    .addOption(jsonOption())
    .addOption(apiUrlOption())
    .addHelpText(
      'after',
      '\nExit status: 0 applied, 5 Arbor changed since the plan, 3 a plan file tampered with;' +
        ' else as for every command.',
    )
    .action(async (o: PlanOpts) => {
      process.exitCode = await (await import('./plan-command.js')).applyCommand(o);
    });
}
