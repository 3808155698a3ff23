import type { ExecutionContext, TestFn } from 'ava';
import type { Locator, Page } from 'playwright-core';
import { axeSerious, browserTest, openBrowser, type Browser } from './browser.js';
import { startConsoleWorld, type ConsoleWorld } from './console-world.js';

/**
 * What every console browser test sets up: a console world and a Chromium, started before
 * the file's own `test.before` hooks (ava runs them in the order they are registered, so a
 * file seeds its data in a `test.before` of its own and finds `w` and `b` ready) and closed
 * after all of them; signing in with a token; a group page's address; axe on the page.
 */
export interface ConsoleTest {
  /** `test.serial`, or every test skipped where Chromium is missing (see browserTest). */
  test: TestFn;
  /** The world; throws before the hooks have started it. */
  readonly w: ConsoleWorld;
  /** The browser; throws before the hooks have opened it. */
  readonly b: Browser;
  /** `b.page`. */
  readonly page: Page;
  /** Open the console, sign out if signed in, sign in with `token`, wait for the views. */
  signInWith(token: string): Promise<void>;
  /** A group page's address, with a tab (`bindings`, `identities`…) or without. */
  groupUrl(uid: string, tab?: string): string;
  /** Fails `t` with every serious or critical axe violation on the page now. */
  noSeriousAxe(t: ExecutionContext, view: string): Promise<void>;
}

/** A console test file's set-up; `env` goes to the server (as startConsoleWorld's). */
export function consoleTest(env: Record<string, string> = {}): ConsoleTest {
  const test = browserTest();
  let world: ConsoleWorld | undefined;
  let browser: Browser | undefined;
  test.before(async () => {
    world = await startConsoleWorld(env);
    browser = await openBrowser();
  });
  test.after.always(async () => {
    await browser?.close();
    await world?.close();
  });
  const started = <T>(x: T | undefined, what: string): T => {
    if (x === undefined) throw new Error(`the console test's ${what} is not started yet`);
    return x;
  };
  const c: ConsoleTest = {
    test,
    get w() {
      return started(world, 'world');
    },
    get b() {
      return started(browser, 'browser');
    },
    get page() {
      return c.b.page;
    },
    signInWith: async (token) => {
      const page = c.page;
      await page.goto(`${c.w.s.url}/console/`);
      const signOut = page.getByRole('button', { name: 'Sign out' });
      if (await signOut.count()) await signOut.click();
      await page.getByLabel('API token').fill(token);
      await page.getByRole('button', { name: 'Sign in with this token' }).click();
      await page.getByRole('navigation', { name: 'Views' }).waitFor();
    },
    groupUrl: (uid, tab = '') =>
      `${c.w.s.url}/console/#/groups/${encodeURIComponent(uid)}${tab ? `/${tab}` : ''}`,
    noSeriousAxe: async (t, view) => {
      const found = await axeSerious(c.page);
      t.deepEqual(
        found.map((v) => `${v.id} (${v.impact}): ${v.help}`),
        [],
        `axe on the ${view} view`,
      );
    },
  };
  return c;
}

/**
 * A region's text once every name in it has come: the console writes a uid (`code.uid`)
 * until its name lookup answers (ui.tsx's NameOf), so text read the moment the region
 * appears may still hold a uid where the person will read a name a moment later.
 */
export async function namedText(region: Locator): Promise<string> {
  await region.waitFor();
  await region.locator('code.uid').first().waitFor({ state: 'detached' });
  return (await region.textContent()) ?? '';
}
