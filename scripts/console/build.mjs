// Builds the web console (console/) into dist/console/, or into the directory given:
// one ES module bundle (Preact with JSX, minified), its stylesheet and index.html.
// Run by `npm run build`; the browser tests build into a temporary directory.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = resolve(process.argv[2] ?? join(root, 'dist', 'console'));

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
await build({
  entryPoints: { app: join(root, 'console', 'app.css') },
  outdir: out,
  bundle: true,
  minify: true,
  logLevel: 'warning',
});
await copyFile(join(root, 'console', 'index.html'), join(out, 'index.html'));
