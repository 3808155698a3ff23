import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import test, { type TestFn } from 'ava';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { skippedTitle } from './need-tool.js';

/**
 * Debian's chromium driven by playwright-core (which downloads no browser), for the web
 * console's browser tests (test/e2e/console*.test.ts).
 */

export const CHROMIUM = process.env.ARBOR_CHROMIUM ?? '/usr/bin/chromium';

/** Where the runs leave their screenshots (gitignored). */
export const ARTIFACTS = resolve('artifacts', 'console');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumMissing(): string | undefined {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return undefined;
  } catch {
    return `no Chromium at ${CHROMIUM} (apt-get install chromium, or set ARBOR_CHROMIUM)`;
  }
}

/**
 * `test.serial` when Chromium is here; otherwise skipped with the reason, except in CI
 * (`CI=true`), where a missing browser is a failure, never a skip.
 */
export function browserTest<T>(): TestFn<T> {
  const missing = chromiumMissing();
  if (missing === undefined) return test.serial as TestFn<T>;
  if (process.env.CI === 'true') {
    test('the browser tests have Chromium (CI never skips them)', (t) => t.fail(missing));
  } else {
    console.log(`SKIPPED console browser tests: ${missing}`);
  }
  // Every test reported skipped; the hooks (which would start a server) never run.
  const skip = (title: string, impl: (t: any) => unknown) =>
    test.skip(skippedTitle(title, `needs Chromium: ${missing}`), impl);
  const none = () => undefined;
  return Object.assign(skip, {
    serial: skip,
    before: none,
    beforeEach: none,
    after: Object.assign(none, { always: none }),
    afterEach: Object.assign(none, { always: none }),
  }) as unknown as TestFn<T>;
}

/** Build the console into a fresh temporary directory (what `npm run build` does). */
export function buildConsole(): string {
  const out = mkdtempSync(join(tmpdir(), 'arbor-console-'));
  execFileSync(process.execPath, ['scripts/console/build.mjs', out], { stdio: 'inherit' });
  return out;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors and dialogs seen so far: anything here is a finding. */
  incidents: string[];
  close(): Promise<void>;
}

/** A fresh headless Chromium profile (its own user-data-dir) and one page. */
export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'arbor-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const incidents: string[] = [];
  page.on('dialog', (d) => {
    incidents.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => incidents.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // A refused API call is logged by Chromium itself ("Failed to load resource: … 403"):
    // expected wherever a test provokes a refusal. Anything else (a CSP violation above all)
    // is a finding.
    if (m.type() !== 'error' && m.type() !== 'warning') return;
    if (/^Failed to load resource: the server responded with a status of \d+/.test(m.text()))
      return;
    incidents.push(`console: ${m.text()}`);
  });
  return {
    context,
    page,
    incidents,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown }>;
}

/**
 * axe-core run in the page (injected through the automation protocol, which the page's CSP
 * does not govern); the serious and critical violations.
 */
export async function axeSerious(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (o: unknown) => Promise<any> } }).axe;
    const r = await axe.run({ resultTypes: ['violations'] });
    return r.violations as AxeViolation[];
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Save a screenshot of the page under artifacts/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
