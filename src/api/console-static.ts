import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';

/**
 * The web console as a door: the built files of `console/` (esbuild → `dist/console/`),
 * served at `/console/` on the API port (docs/adr/0010-console.md). The files are read once
 * at start-up into a table keyed by their relative path, and a request is answered only by
 * a lookup in that table: no part of a request path ever reaches the filesystem, so no
 * spelling of `..`, `%2e%2e`, an absolute path or a NUL can name a file outside the build.
 */

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface ConsoleAssets {
  files: ReadonlyMap<string, Asset>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Paths of the single-page app that are not files: its own routes answer `index.html`. */
const APP_ROUTES = new Set(['', 'callback']);

const PREFIX = '/console/';

/** `dist/console` of the package this module belongs to (source or built layout alike). */
export function defaultConsoleDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return join(dir, 'dist', 'console');
}

function walk(root: string, dir: string, out: Map<string, Asset>): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(root, full, out);
    else {
      const type = TYPES[extname(name)];
      // Only kinds of file a browser is meant to have (no maps, no stray sources).
      if (type === undefined) continue;
      const body = readFileSync(full);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      out.set(relative(root, full).split(sep).join('/'), { body, type, etag });
    }
  }
}

/**
 * The built console in `dir` (default: the package's `dist/console`), or undefined when it
 * has not been built (no index.html).
 */
export function loadConsoleAssets(dir = defaultConsoleDir()): ConsoleAssets | undefined {
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const files = new Map<string, Asset>();
  walk(dir, dir, files);
  return { files };
}

/**
 * The policy every console answer carries. Scripts and styles from this origin only (no
 * inline code anywhere in the build), API calls to this origin, and the login provider's
 * origin for the one call the browser makes there (the PKCE token request).
 */
export function consoleCsp(loginIssuer: string | undefined): string {
  const connect = ["'self'", ...(loginIssuer ? [new URL(loginIssuer).origin] : [])];
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${connect.join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

function securityHeaders(ctx: Context, csp: string): void {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
}

function serve(ctx: Context, asset: Asset): void {
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', asset.etag);
  if (ctx.get('if-none-match') === asset.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = asset.type;
  ctx.body = asset.body;
}

/**
 * Koa middleware for `/`, `/console` and `/console/*`; everything else passes through.
 * GET and HEAD only (anything else: 405 with Allow). Unknown paths: 404, from the table.
 */
export function consoleStatic(assets: ConsoleAssets | undefined, loginIssuer: string | undefined) {
  const csp = consoleCsp(loginIssuer);
  return async function consoleStaticMiddleware(ctx: Context, next: Next): Promise<void> {
    const path = ctx.path;
    const ours = path === '/' || path === '/console' || path.startsWith(PREFIX);
    if (!ours || (path === '/' && assets === undefined)) {
      await next();
      return;
    }
    securityHeaders(ctx, csp);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      ctx.status = 405;
      return;
    }
    if (path === '/' || path === '/console') {
      ctx.redirect(PREFIX);
      return;
    }
    if (assets === undefined) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'The console is not built here: run `npm run build`.\n';
      return;
    }
    const rest = path.slice(PREFIX.length);
    const asset = APP_ROUTES.has(rest) ? assets.files.get('index.html') : assets.files.get(rest);
    if (asset === undefined) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'Not found.\n';
      return;
    }
    serve(ctx, asset);
  };
}
