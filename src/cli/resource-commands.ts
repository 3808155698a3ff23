import { Option, type Command } from './commander.js';
import { repeat } from './argv-command.js';
import { OUTPUT_FORMATS } from './printers/output-formats.js';
import { plural, RESOURCE_KINDS, withArticle, type ResourceKind } from './resource-kinds.js';

/** `-o, --output`, on every command that prints resources. */
export const outputOption = () =>
  new Option('-o, --output <format>', 'output format').choices(OUTPUT_FORMATS).default('table');

/** `--api`, on every command that calls the API. */
export const apiUrlOption = () =>
  new Option(
    '--api <url>',
    'Arbor API address (default: $ARBOR_API_URL, then http://localhost:8080)',
  );

/** Every action runs the module that calls the API only when invoked: help loads nothing. */
const act =
  (verb: string, kind: ResourceKind) =>
  async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const { runResourceCommand } = await import('./resource-actions.js');
    await runResourceCommand(verb, kind, cmd.processedArgs as unknown[], cmd.opts());
  };

function addFields(cmd: Command, kind: ResourceKind): Command {
  for (const f of kind.fields) {
    if (f.list || f.from === 'pairs') cmd.option(f.flag, f.description, repeat);
    else cmd.option(f.flag, f.description);
  }
  return cmd.option('-f, --file <path>', 'the body as a JSON or YAML file (- for standard input)');
}

/**
 * `arbor <kind> list|get|create|update|delete` for every row of the kinds table, with the
 * API's flags: one generator, so every kind takes the same flags the same way. A kind's
 * verbs are built only when `wanted(command)` (the command line names the kind, or asks for
 * completion, which reads the whole tree): the kind commands with all their options are most
 * of the tree, and `arbor --help` shows only each kind's one line (the CLI's start-up bound).
 */
export function registerResourceCommands(
  program: Command,
  wanted: (command: string) => boolean,
): void {
  for (const kind of RESOURCE_KINDS) {
    const group = program
      .command(kind.command)
      .description(`${kind.verbs.join(', ')} ${plural(kind.noun)}`);
    if (wanted(kind.command)) addVerbs(group, kind);
  }
}

/** The placeholder of a list filter that takes a reference, resolved by name (name-resolver.ts). */
const FILTER_VALUE: Readonly<Record<string, string>> = {
  identity: 'identity',
  group: 'group',
  role: 'role',
  // Not resolved by name: an identity uid, as the API takes it.
  requester: 'uid',
};

/** A kind's verbs under its command, each with the API's flags for it. */
function addVerbs(group: Command, kind: ResourceKind): void {
  if (kind.verbs.includes('list')) {
    const list = group
      .command('list')
      .alias('ls')
      .description(`list the ${plural(kind.noun)} you can see`)
      .option(
        '--parent <group>',
        'only direct children of this group, a uid or a path of names (uidp.children_of)',
      )
      .option('--children-of <group>', 'the same as --parent')
      .option('--descendants-of <group>', 'everything below this group (uidp.descendants_of)')
      .option('--order-by <order>', 'uid, name or created_at, optionally followed by " desc"')
      .option('--page-size <n>', 'items per page (the API caps it at 200)')
      .option('--page-token <token>', 'continue a listing where the last page ended')
      .option('--skip <n>', 'skip this many items first')
      .option('--all', 'follow nextPageToken to the end and print every page');
    if (kind.verbs.includes('create') && kind.fields.some((f) => f.key === 'name'))
      list.option('--name <name>', 'only those with this exact name');
    for (const [filter, description] of Object.entries(kind.filters ?? {}))
      list.option(`--${filter} <${FILTER_VALUE[filter] ?? 'value'}>`, description);
    list.addOption(outputOption()).addOption(apiUrlOption()).action(act('list', kind));
  }
  // A role binding has no name of its own: it is named by its group, identity and role.
  const byNames = kind.command === 'role-bindings';
  if (kind.verbs.includes('get')) {
    const get = group.command('get').description(`show one ${kind.noun}`);
    if (byNames) bindingName(get.argument('[uid]', 'its uid, or name it by the flags below'));
    else get.argument('<name>', `the ${kind.noun}'s name (a path of names), or its uid`);
    get.addOption(outputOption()).addOption(apiUrlOption()).action(act('get', kind));
  }
  if (kind.verbs.includes('create')) {
    const create = group
      .command('create')
      .description(`create ${withArticle(kind.noun)}`)
      .option(
        '--parent <group>',
        kind.rootCreate
          ? 'the parent group, a uid or a path of names (none: an organization)'
          : 'the group it belongs to, a uid or a path of names',
      );
    addFields(create, kind)
      .addOption(outputOption())
      .addOption(apiUrlOption())
      .action(act('create', kind));
  }
  if (kind.verbs.includes('update')) {
    const update = group
      .command('update')
      .description(
        `change ${withArticle(kind.noun)}: only the fields given (they form the update mask)`,
      )
      .argument('<name>', `the ${kind.noun}'s name (a path of names), or its uid`)
      .option('--update-mask <fields>', 'comma-separated fields to change (default: those given)');
    addFields(update, kind)
      .addOption(outputOption())
      .addOption(apiUrlOption())
      .action(act('update', kind));
  }
  if (kind.verbs.includes('delete')) {
    const del = group
      .command('delete')
      .alias('rm')
      .description(`delete ${plural(kind.noun)}`);
    if (byNames)
      bindingName(del.argument('[uid...]', 'their uids, or name one by the flags below'));
    else del.argument('<name...>', 'their names (paths of names), or uids');
    del.addOption(apiUrlOption()).action(act('delete', kind));
  }
}

/** `--group`, `--identity` and `--role`: a role binding by what it is, instead of its uid. */
function bindingName(cmd: Command): Command {
  return cmd
    .option(
      '--group <group>',
      'the group it is bound at: a path of names (acme/platform), or a uid',
    )
    .option(
      '--identity <identity>',
      'the identity bound: its group path and name (acme/ci), or a uid',
    )
    .option(
      '--role <role>',
      'the role granted: a name (built in, or at the group or above), or a uid',
    );
}
