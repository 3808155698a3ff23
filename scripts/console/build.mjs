// Builds the web console (console/) into dist/console/, or into the directory given:
// one ES module bundle (Preact with JSX, minified), its stylesheet and index.html.
// Run by `npm run build`; the browser tests build into a temporary directory.
import { copyFile, mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = resolve(process.argv[2] ?? join(root, 'dist', 'console'));

// `npm start` builds before every start: with nothing changed since the last build into
// dist/console, write nothing (as tsc -b does for the server).
const STAMP = `${out}.built`; // beside the served files, not among them
if (process.argv[2] === undefined && (await newestInput()) < (await mtime(STAMP))) process.exit(0);

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: {
    app: join(root, 'console', 'src', 'main.tsx'),
  },
  outdir: out,
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  minify: true,
  legalComments: 'none',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(root, 'console', 'tsconfig.json'),
  logLevel: 'warning',
});
// One stylesheet: app.css, then the stylesheets of the pickers and the access views, and
// of the access delta a change shows before its confirm (review.css).
await build({
  stdin: {
    contents: "@import './app.css';\n@import './access.css';\n@import './review.css';\n",
    resolveDir: join(root, 'console'),
    loader: 'css',
  },
  outfile: join(out, 'app.css'),
  bundle: true,
  minify: true,
  logLevel: 'warning',
});
await copyFile(join(root, 'console', 'index.html'), join(out, 'index.html'));
await writeFile(STAMP, '');

/** Modification time of `path` in ms, or -1 when it is missing. */
async function mtime(path) {
  return stat(path).then(
    (s) => s.mtimeMs,
    () => -1,
  );
}

/** The newest input of the bundle: the console's sources, this script, the locked dependencies. */
async function newestInput() {
  const files = (await readdir(join(root, 'console'), { recursive: true })).map((f) =>
    join(root, 'console', f),
  );
  files.push(fileURLToPath(import.meta.url), join(root, 'package-lock.json'));
  return Math.max(...(await Promise.all(files.map(mtime))));
}
