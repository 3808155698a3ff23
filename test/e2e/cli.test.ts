import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'ava';
import { freePort } from '../helpers/process.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function arbor(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import=tsx', 'src/main.ts', ...args],
      { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

const helpCases: string[][] = [
  ['--help'],
  ['-h'],
  ['serve', '--help'],
  ['serve', '-h'],
  ['migrate', '--help'],
  ['status', '--help'],
  ['reconcile', '--help'],
  ['auth', 'login', '--help'],
  ['import-advisories', '--help'],
  ['help', 'serve'],
];

for (const args of helpCases) {
  test(`cli: "arbor ${args.join(' ')}" prints help and starts nothing`, async (t) => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'arbor-cli-')), 'data');
    const port = await freePort();
    try {
      // The server, if it started, would hold the port and create the data dir; KUBECONFIG
      // points nowhere, so a reconciler that started would fail instead of printing help.
      const r = await arbor(args, {
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        KUBECONFIG: join(dataDir, 'missing'),
      });
      t.is(r.code, 0, r.stderr);
      t.regex(r.stdout, /^Usage: arbor/);
      t.false(existsSync(dataDir), 'no database was created');
      t.false(await listening(port), 'no port was bound');
    } finally {
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  });
}

test('cli: --version prints the package version', async (t) => {
  const r = await arbor(['--version']);
  t.is(r.code, 0);
  t.regex(r.stdout, /^\d+\.\d+\.\d+\n$/);
});

test('cli: an unknown option or command is a usage error with exit code 2', async (t) => {
  const option = await arbor(['serve', '--prot', '8080']);
  t.is(option.code, 2);
  t.regex(option.stderr, /unknown option '--prot'/);
  const command = await arbor(['serv']);
  t.is(command.code, 2);
  t.regex(command.stderr, /unknown command 'serv'[\s\S]*serve/);
  const missing = await arbor(['auth', 'login', '--api', 'http://127.0.0.1:1']);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /--identity/);
});

test('cli: the bash completion script completes commands and their options', async (t) => {
  const script = await arbor(['completion', 'bash']);
  t.is(script.code, 0);
  const complete = (words: string) =>
    new Promise<string>((resolve, reject) => {
      const cword = words.split(' ').length - 1;
      execFile(
        'bash',
        [
          '-c',
          `${script.stdout}\nCOMP_WORDS=(${words}); COMP_CWORD=${cword}; _arbor_complete; echo "\${COMPREPLY[*]}"`,
        ],
        (err, stdout) => (err ? reject(new Error(err.message)) : resolve(stdout.trim())),
      );
    });
  t.is(await complete('arbor se'), 'serve secret-key');
  t.is(await complete('arbor ser'), 'serve');
  t.is(await complete('arbor auth l'), 'login logout');
  t.is(await complete('arbor auth lo'), 'login logout');
  t.is(await complete('arbor auth logi'), 'login');
  t.is(await complete('arbor auth login --id'), '--identity --id-token-file');
  const zsh = await arbor(['completion', 'zsh']);
  t.regex(zsh.stdout, /^#compdef arbor\n/);
  t.regex(zsh.stdout, /_describe -t "\$kind"/, 'names come with their descriptions');
  const fish = await arbor(['completion', 'fish']);
  t.is(fish.code, 0);
  t.regex(fish.stdout, /^complete -c arbor -f -a '\(_arbor_complete\)'$/m);
  const tcsh = await arbor(['completion', 'tcsh']);
  t.is(tcsh.code, 2);
});
