import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';

const run = promisify(execFile);

/**
 * `npm pack` yields a package whose `bin` works: it builds first (prepack), ships the built
 * files, and `arbor` runs from a PATH as npm's global install lays it out (a link in a
 * `bin` directory to the package's main.js, made executable). The dependencies come from
 * this checkout's node_modules, so the test needs no registry.
 */
test('npm pack: the tarball holds the built CLI, and its bin runs from the PATH', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-pack-'));
  try {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
      maxBuffer: 64 * 1024 * 1024,
      timeout: 8 * 60_000,
    });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    const files = new Set(packed!.files.map((f) => f.path));
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      bin: Record<string, string>;
      exports: { './client': { types: string; default: string } };
    };
    const main = pkg.bin.arbor!;
    t.true(files.has(main), `${main} is in the tarball`);
    t.true(files.has(pkg.exports['./client'].default.slice(2)));
    t.true(files.has(pkg.exports['./client'].types.slice(2)));
    // The web console, built by `npm run build` (prepack) and served by `arbor serve`.
    for (const f of ['index.html', 'app.js', 'app.css'])
      t.true(files.has(`dist/console/${f}`), `dist/console/${f} is in the tarball`);
    t.false(
      [...files].some((f) => f.startsWith('console/')),
      'no console sources',
    );
    t.false(
      [...files].some((f) => f.startsWith('src/') || f.startsWith('test/')),
      'no sources',
    );

    await run('tar', ['xzf', join(dir, packed!.filename), '-C', dir]);
    const installed = join(dir, 'package');
    t.regex(readFileSync(join(installed, main), 'utf8'), /^#!\/usr\/bin\/env node\n/);
    symlinkSync(join(process.cwd(), 'node_modules'), join(installed, 'node_modules'));
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    symlinkSync(join(installed, main), join(bin, 'arbor'));
    chmodSync(join(installed, main), 0o755);

    // A new shell, with only the bin directory and the system's on the PATH.
    const shell = (cmd: string) =>
      run('bash', ['-c', cmd], {
        env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir },
        cwd: dir,
      });
    const help = await shell('arbor --help');
    t.regex(help.stdout, /^Usage: arbor/);
    t.regex(help.stdout, /groups/);
    t.regex((await shell('arbor --version')).stdout, /^\d+\.\d+\.\d+\n$/);
    t.regex((await shell('arbor role-bindings create --help')).stdout, /--identity <identity>/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
