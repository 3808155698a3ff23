import type { Command } from 'commander';
import { apiUrlOption, outputOption } from './resource-commands.js';

type Opts = Record<string, unknown>;

/** Every action loads the module that calls the API only when run: help loads nothing. */
const act =
  (name: 'request' | 'approve' | 'deny' | 'cancel' | 'policy' | 'show') =>
  async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const actions = await import('./request-actions.js');
    process.exitCode = await actions[name](cmd.processedArgs as unknown[], cmd.opts<Opts>());
  };

/**
 * Access requests (docs/access-requests.md): `arbor request` asks, `arbor approve` and
 * `arbor deny` decide, `arbor requests list|get|cancel|policy` (list and get from the kinds
 * table). An approver's inbox is `arbor requests list --state PENDING`.
 */
export function registerRequestCommands(program: Command): void {
  program
    .command('request')
    .description('ask for a role at a group for a while; approvers see it in their inbox')
    .argument('<role>', 'the role: a uid, or a name (built in, or defined at the group or above)')
    .requiredOption('--group <group>', 'where: a uid or a path of names')
    .requiredOption('--for <duration>', 'how long the binding lasts once it starts: 90m, 8h, 7d')
    .requiredOption('--reason <text>', 'why, for the approvers and the audit trail')
    .option('--from <duration>', 'start this long after approval is possible (a scheduled grant)')
    .option('--not-before <time>', 'the same, as an RFC 3339 time')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('request'));
  for (const [verb, what] of [
    [
      'approve',
      'approve a request: shows who asks for what where and what it grants, then asks (the last approval needed makes the binding)',
    ],
    ['deny', 'deny a request (shown first, then asked): it is closed'],
  ] as const) {
    program
      .command(verb)
      .description(what)
      .argument('<request>', 'the request uid')
      .option('--reason <text>', 'why, for the requester and the audit trail')
      .option('--yes', 'do not ask first (needed without a terminal)')
      .addOption(outputOption())
      .addOption(apiUrlOption())
      .action(act(verb));
  }
  const requests = program.commands.find((c) => c.name() === 'requests');
  if (!requests) throw new Error('the requests command must be registered first');
  requests
    .command('show')
    .description(
      'a request as a sentence (who asks, for which role, where, how long, why, approvals N ' +
        'of M) and, while pending, what approving it grants',
    )
    .argument('<request>', 'the request uid')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('show'));
  requests
    .command('cancel')
    .description('withdraw your own pending request')
    .argument('<request>', 'the request uid')
    .option('--reason <text>', 'why')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('cancel'));
  requests
    .command('policy')
    .description(
      "show a group's request policy, or set it with --approvals (needs groups.update and " +
        'role_bindings.create there)',
    )
    .requiredOption('--group <group>', 'a uid or a path of names')
    .option('--approvals <n>', 'distinct approvers each request here and below needs (1-10)')
    .option('--timeout <duration>', 'how long requests wait for them (default 7d)')
    .addOption(outputOption())
    .addOption(apiUrlOption())
    .action(act('policy'));
}
