import type { Command } from 'commander';
import { apiUrlOption, outputOption } from './resource-commands.js';

type Opts = Record<string, unknown>;

/** Every action loads the module that calls the API only when run: help loads nothing. */
const act =
  (name: 'open' | 'list' | 'show' | 'decide' | 'schedule') =>
  async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const actions = await import('./review-actions.js');
    process.exitCode = await actions[name](cmd.processedArgs as unknown[], cmd.opts<Opts>());
  };

/**
 * Access reviews (docs/access-reviews.md): `arbor reviews open|list|show|decide|schedule`.
 * Opening and scheduling take role_bindings.update and .delete at the group; deciding takes
 * what the same change to the binding would take directly.
 */
export function registerReviewCommands(program: Command): void {
  const reviews = program
    .command('reviews')
    .description('review the role bindings at and below a group: keep, shorten or remove each');
  reviews
    .command('open')
    .description('open a review of every binding at and below a group, due by a date')
    .requiredOption('--group <group>', 'a uid or a path of names')
    .requiredOption('--due <when>', 'in how long (14d, at most 365d) or an RFC 3339 time')
    .option(
      '--default <decision>',
      'what the due date does to the undecided: keep or expire',
      'keep',
    )
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('open'));
  reviews
    .command('list')
    .description('the reviews you can see (of one group with --group)')
    .option('--group <group>', 'a uid or a path of names')
    .option('--state <state>', 'OPEN, COMPLETED or DEFAULTED')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('list'));
  reviews
    .command('show')
    .description('a review and its items you can see (the first 200)')
    .argument('<review>', 'the review uid')
    .option('--undecided', 'only the items still undecided')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('show'));
  reviews
    .command('decide')
    .description('keep, shorten or remove one item; applied to its binding at once')
    .argument('<item>', 'the item uid')
    .argument('<decision>', 'keep, shorten or remove')
    .requiredOption('--reason <text>', 'why, for the audit trail (at most 1024 characters)')
    .option('--expire-in <duration>', 'shorten: the binding ends this long from now (at most 365d)')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('decide'));
  reviews
    .command('schedule')
    .description("show a group's review schedule, set it with --every, or remove it with --off")
    .requiredOption('--group <group>', 'a uid or a path of names')
    .option('--every <duration>', 'open a review this often, in days (90d)')
    .option('--due-in <duration>', 'each due this long after it opens (default 14d)')
    .option('--default <decision>', 'keep or expire (default keep)')
    .option('--off', 'remove the schedule')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('schedule'));
}
