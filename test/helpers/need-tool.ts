import test from 'ava';
import { TEST_BACKEND } from './db.js';

/**
 * Every conditional skip in the suite goes through here, so that a skip always carries
 * its reason in the test's title (ava's TAP output has no other place for it:
 * `ok 7 - file › title (skipped: why) # SKIP`) and so that CI cannot go green by skipping.
 * scripts/test.mjs reads the reason back, lists every skip, and fails CI on any skip whose
 * reason is not an expected one (POSTGRES_ONLY on a PGlite pass).
 */

/** The reason of a test that applies to PostgreSQL only: expected on a PGlite pass. */
const POSTGRES_ONLY = 'PostgreSQL only';

/** Narrows POSTGRES_ONLY: a test of a direct connection, which a pooler pass leaves out. */
export const NOT_POOLED = 'not through a pooler';

/** A way to declare a test: `test`, `test.serial`, or one of the files' own aliases. */
type Declare = (title: string, ...rest: any[]) => unknown;

const inCi = () => process.env.CI === 'true';

/** `title (skipped: why)`: the form scripts/test.mjs parses. */
export function skippedTitle(title: string, why: string): string {
  return `${title} (skipped: ${why.replace(/[()\n]/g, ' ').trim()})`;
}

/** Declares each test skipped, its reason in its title. */
function skipping<F extends Declare>(why: string): F {
  return ((title: string, ...rest: any[]) =>
    (test.skip as Declare)(skippedTitle(title, why), ...rest)) as F;
}

/**
 * `declare` when the tool is here (`missing` undefined). Without it, each test is reported
 * skipped with the reason, except in CI (`CI=true`, where .ci/run installs or builds every
 * tool the suite uses): there each test fails, naming the tool, never skips.
 */
export function needTool<F extends Declare>(
  declare: F,
  tool: string,
  missing: string | undefined,
): F {
  if (missing === undefined) return declare;
  const why = `needs ${tool}: ${missing}`;
  if (!inCi()) return skipping<F>(why);
  return ((title: string) =>
    test(`${title} (${tool} missing)`, (t) => {
      t.fail(`${why} (CI never skips for a missing tool)`);
    })) as unknown as F;
}

/**
 * `declare` on PostgreSQL; on PGlite each test is reported skipped as POSTGRES_ONLY (an
 * expected skip), rather than passing after doing nothing. `also` narrows further (e.g.
 * not through a pooler), with its own reason.
 */
export function postgresOnly<F extends Declare>(
  declare: F,
  also?: { when: boolean; why: string },
): F {
  if (TEST_BACKEND !== 'postgres') return skipping<F>(POSTGRES_ONLY);
  if (also && !also.when) return skipping<F>(`${POSTGRES_ONLY}, ${also.why}`);
  return declare;
}
