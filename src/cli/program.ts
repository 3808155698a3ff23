import { Command, CommanderError, Option } from './commander.js';
import { argvOf, repeat } from './argv-command.js';
import { registerEverydayCommands } from './everyday-commands.js';
import { packageVersion } from './package-version.js';
import { registerPlanCommands } from './plan-commands.js';

/** `--api` of the admin commands: they go through a server instead of the database. */
function adminApiOption(): Option {
  return new Option(
    '--api <url>',
    'do it through the Arbor API at this address (default: $ARBOR_API_URL, else the server that runs on DATA_DIR, else the database directly)',
  );
}

/**
 * Which resource kinds' verbs the tree needs for this command line: those it names (as
 * `arbor groups get`, `arbor help groups` or `arbor groups --help` do), or all of them for
 * completion, which walks the whole tree, and when no command line is given.
 */
function kindsNamedIn(argv: readonly string[] | undefined): (command: string) => boolean {
  if (argv === undefined || argv.includes('completion') || argv.includes('__complete'))
    return () => true;
  const words = new Set(argv);
  return (command) => words.has(command);
}

/**
 * The `arbor` command tree. Each command is one block below; its action loads its module on
 * demand, so `arbor <anything> --help` imports nothing heavy and starts nothing. Adding a
 * command is adding one block (or one `registerX(program)` call from a `src/cli/*` module).
 * Given the command line, a resource kind's verbs are built only if it names the kind.
 */
export function buildProgram(argv?: readonly string[]): Command {
  const program = new Command('arbor')
    .description('Arbor: self-hostable platform IAM (API, STS, Kubernetes reconciler)')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'print help and exit')
    .showSuggestionAfterError()
    // Inherited by every command added below: usage errors throw instead of exiting.
    .exitOverride();
  registerServerCommands(program);
  registerAuthCommands(program);
  registerDataCommands(program);
  // @commands (one block per command)
  registerEverydayCommands(program, kindsNamedIn(argv));
  registerPlanCommands(program);
  return program;
}

/** serve, migrate, status, reconcile, import-advisories: running and feeding a server. */
function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('serve the API, the STS and OIDC discovery (applies pending migrations)')
    .option(
      '--workers <n>',
      'API processes (default: $ARBOR_WORKERS, then one per core; always 1 on PGlite)',
    )
    .action(async (_opts, cmd: Command) => {
      const [{ serveCommand }, cluster] = await Promise.all([
        import('./serve.js'),
        import('../serve-cluster.js'),
      ]);
      await cluster.serveCommand(serveCommand, argvOf(cmd));
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .action(async () => (await import('./migrate.js')).migrateCommand(false));

  program
    .command('status')
    .description('show applied and pending migrations (through the server when one runs)')
    .addOption(adminApiOption())
    .action(async (o: { api?: string }) => {
      process.exitCode = await (await import('./migrate.js')).statusCommand(o);
    });

  program
    .command('reconcile')
    .description(
      'sync Group/Identity/RoleBinding custom resources from Kubernetes (KUBECONFIG or in-cluster)',
    )
    // Loaded on demand: the API server need not load the Kubernetes client.
    .action(async () =>
      (await import('../reconciler/command.js')).reconcileCommand(packageVersion()),
    );

  program
    .command('import-advisories')
    .description('import OSV advisory files (a .json file or a directory), in one transaction')
    .argument('[path]', 'an OSV .json file, or a directory searched for them')
    .addOption(adminApiOption())
    .action(async (path: string | undefined, o: { api?: string }) => {
      const { importAdvisoriesCommand } = await import('./import-advisories.js');
      process.exitCode = await importAdvisoriesCommand(path === undefined ? [] : [path], o);
    });
}

/** `arbor auth …`: sign in and handle API tokens. */
function registerAuthCommands(program: Command): void {
  const auth = program.command('auth').description('sign in and handle API tokens');
  const apiOption = () =>
    new Option(
      '--api <url>',
      'Arbor API address (default: $ARBOR_API_URL, then http://localhost:8080)',
    );
  auth
    .command('login')
    .description(
      'sign in (browser OIDC + PKCE, or an ID token) as yourself, or as an identity with --identity',
    )
    .option(
      '--identity <identity>',
      'assume this identity (a uid or a path of names) instead of signing in as yourself',
    )
    .addOption(apiOption())
    .option(
      '--audience <url>',
      "the token audience: the server's ARBOR_ISSUER_URL (default: from the server's discovery)",
    )
    .option('--issuer <url>', 'OIDC issuer to log in at in the browser')
    .option('--client-id <id>', 'OAuth client id at that issuer')
    .option('--scope <scope>', 'an extra scope to ask for (repeatable)', repeat)
    .option('--id-token-file <path>', 'read an ID token from a file, or - for standard input')
    .option('--invite <code>', 'redeem a group invite after signing in')
    .option('--headless', 'no browser here: paste back the address the browser ended on')
    .addOption(new Option('--no-browser', 'print the login address without opening a browser'))
    .action(async (_opts, cmd: Command) => {
      const { authLoginCommand } = await import('./auth-login.js');
      process.exitCode = await authLoginCommand(argvOf(cmd));
    });
  for (const [name, description] of [
    ['token', 'print a valid API token, refreshing it when it is about to expire'],
    ['status', 'who is signed in to the API address, with which token, until when'],
    ['logout', 'forget the credentials for the API address'],
  ] as const) {
    const sub = auth.command(name).description(description).addOption(apiOption());
    if (name === 'logout') sub.option('--all', 'forget the credentials for every address');
    sub.action(async (_opts, cmd: Command) => {
      const { authCommand } = await import('./auth-commands.js');
      process.exitCode = await authCommand([name, ...argvOf(cmd)]);
    });
  }
  auth
    .command('revoke')
    .argument('[token]', 'the API token to revoke (default: the one this command uses)')
    .description(
      "revoke an API token and every token exchanged from it (the token's holder, the admin, or who may update its identity)",
    )
    .addOption(apiOption())
    .action(async (token: string | undefined, o: { api?: string }) => {
      const { authRevokeCommand } = await import('./auth-revoke.js');
      process.exitCode = await authRevokeCommand(token, o);
    });
  const sessions = auth
    .command('sessions')
    .description('list your live API tokens and those exchanged from them (the admin: everyone’s)')
    .addOption(apiOption())
    .addOption(new Option('-o, --output <format>', 'table or json').choices(['table', 'json']))
    .action(async (o: { api?: string; output?: string }) => {
      const { authSessionsCommand } = await import('./auth-sessions.js');
      process.exitCode = await authSessionsCommand(o);
    });
  sessions
    .command('revoke')
    .argument('<id>', 'the jti of a listed token, or its first eight or more characters')
    .description('revoke one of your API tokens and every token exchanged from it')
    .addOption(apiOption())
    .action(async (id: string, o: { api?: string }) => {
      const { authSessionsRevokeCommand } = await import('./auth-sessions.js');
      process.exitCode = await authSessionsRevokeCommand(id, o);
    });
}

/** export, secret-key, completion, backup, restore: the data and the keys around it. */
function registerDataCommands(program: Command): void {
  program
    .command('export')
    .description('write the Groups, Identities and RoleBindings below a group as custom resources')
    .requiredOption('--group <group>', 'the group whose tree to export: a uid or a path of names')
    .option('--namespace <ns>', 'the namespace of the exported objects')
    .addOption(adminApiOption())
    .action(async (_opts, cmd: Command) => {
      const { exportCommand } = await import('./export.js');
      process.exitCode = await exportCommand(argvOf(cmd));
    });

  const secretKey = program
    .command('secret-key')
    .description('keys that seal secrets at rest (see docs/security.md)');
  secretKey
    .command('new')
    .description('make a new key for secrets at rest')
    .action(async () => {
      const { newSecretKeyCommand } = await import('./secret-keys.js');
      process.exitCode = await newSecretKeyCommand();
    });
  secretKey
    .command('reseal')
    .description('seal every stored secret with the current key')
    .addOption(adminApiOption())
    .action(async (o: { api?: string }) => {
      const { resealSecretsCommand } = await import('./secret-keys.js');
      process.exitCode = await resealSecretsCommand(o);
    });

  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .argument('<shell>', 'bash, zsh or fish')
    .action(async (shell: string) => {
      const { COMPLETION_SHELLS, completionScript } = await import('./completion.js');
      if (!(COMPLETION_SHELLS as readonly string[]).includes(shell)) {
        throw new CommanderError(2, 'arbor.shell', `error: no completion for shell "${shell}"`);
      }
      process.stdout.write(completionScript(program, shell));
    });

  program
    .command('backup')
    .description(
      'write the embedded database and its keys to a file (through the server when one runs)',
    )
    .argument('<file>', 'the backup file to write')
    .addOption(adminApiOption())
    .option(
      '--without-keys',
      'write the database alone when the key files cannot be read here (back them up yourself)',
    )
    .action(async (file: string, o: { api?: string; withoutKeys?: boolean }) => {
      process.exitCode = await (await import('./backup.js')).backupCommand(file, o);
    });
  program
    .command('restore')
    .description('load a backup into the embedded data directory (with no server on it)')
    .argument('<file>', 'a file written by arbor backup')
    .option('--force', 'replace the database and key files that are there')
    .action(async (file: string, o: { force?: boolean }) => {
      process.exitCode = await (await import('./backup.js')).restoreCommand(file, o);
    });
}

/**
 * Runs the CLI and sets the exit code: 0 after help or version, 2 on a usage error (commander
 * has printed it), 1 on a configuration error or a failure; a CliError exits with its code
 * (cli-errors.ts: the documented table).
 */
export async function runCli(argv: readonly string[]): Promise<void> {
  const program = buildProgram(argv);
  if (argv.length === 0) {
    program.outputHelp();
    return;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'arbor.shell') process.stderr.write(`${e.message}\n`);
      // Help and version exit 0; every usage error (commander says 1) is 2, as before, but
      // for plan, whose 2 means "changes" (terraform's -detailed-exitcode): 1 there.
      process.exitCode = e.exitCode === 0 ? 0 : argv[0] === 'plan' ? 1 : 2;
      return;
    }
    // Loaded only on a failure: `--help` and `--version` load no more than they print.
    const [{ CliError, reportCliError }, { ConfigError }, { StartupError }] = await Promise.all([
      import('./cli-errors.js'),
      import('../config-error.js'),
      import('../startup-error.js'),
    ]);
    if (e instanceof CliError) {
      process.exitCode = reportCliError(e);
      return;
    }
    if (e instanceof ConfigError) process.stderr.write(`arbor: configuration: ${e.message}\n`);
    else if (e instanceof StartupError) process.stderr.write(`arbor: ${e.message}\n`);
    else {
      // A stack helps whoever debugs Arbor, not whoever runs it: only with LOG_LEVEL=debug.
      const debug = /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '');
      const text = e instanceof Error ? (debug ? (e.stack ?? e.message) : e.message) : String(e);
      process.stderr.write(`arbor: ${text}\n`);
    }
    process.exit(1);
  }
}
