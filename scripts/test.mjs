#!/usr/bin/env node
// Runs the suite the way CI does: unit and integration tests on embedded PGlite, the
// integration tests again on a real PostgreSQL (and a subset of them through PgBouncer in
// transaction mode), the failover test on a pg_auto_failover formation, then the
// end-to-end tests (the server process, and the Kubernetes reconciler when a control
// plane is available). Ends with the list of every skipped test and its reason, then one
// line `N passed, N failed, N skipped` summed over every run.
//
// A test skips only through test/helpers/need-tool.ts, which puts the reason in its title:
// `title (skipped: why)`. The one expected reason is POSTGRES_ONLY, on a pass that runs
// on PGlite; any other skip (a missing tool, no reason at all) is unexpected. Under
// CI=true an unexpected skip counts as a failure, so CI cannot go green by skipping.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmdirSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const pgUrl = process.env.ARBOR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ci = process.env.CI === 'true';
const requirePg = process.env.ARBOR_REQUIRE_POSTGRES === '1' || ci;
const extra = process.argv.slice(2);

function reachable(url) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port || 5432) });
    s.setTimeout(2000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

/** A loopback port nobody listens on right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

const totals = { passed: 0, failed: 0, skipped: 0 };

// The reasons test/helpers/need-tool.ts gives (POSTGRES_ONLY, and NOT_POOLED after it).
const POSTGRES_ONLY = 'PostgreSQL only';
const NOT_POOLED = `${POSTGRES_ONLY}, not through a pooler`;
/** Every skipped test: which pass, its title, its reason, and whether it was expected. */
const skips = [];

/** A TAP skip line's title and reason (`title (skipped: why) # SKIP`). */
function parseSkip(line) {
  const title = line.replace(/^ok \d+ - /, '').replace(/\s*# SKIP.*$/i, '');
  const m = /^(.*) \(skipped: (.*)\)$/.exec(title);
  return m ? { title: m[1], reason: m[2] } : { title, reason: 'no reason given' };
}

/**
 * Runs ava over `files` and adds its counts to the totals. `expected`: the skip reasons
 * this pass may give (POSTGRES_ONLY on PGlite); any other skip fails the run under CI.
 */
function runAva(label, files, env, { nodeBin, expected = [] } = {}) {
  console.log(`\n=== ${label} ===`);
  return new Promise((resolve) => {
    // Another Node (the LTS the image runs on) runs ava itself, and through PATH its workers.
    const [cmd, args, path] = nodeBin
      ? [
          nodeBin,
          ['node_modules/ava/entrypoints/cli.mjs'],
          `${dirname(nodeBin)}:${process.env.PATH}`,
        ]
      : ['npx', ['ava'], process.env.PATH];
    const child = spawn(cmd, [...args, '--tap', ...files, ...extra], {
      env: { ...process.env, ...env, PATH: path },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buf = '';
    const counts = { passed: 0, failed: 0, skipped: 0 };
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (/^not ok \d+/.test(line)) counts.failed++;
        else if (/^ok \d+.*# SKIP/i.test(line)) {
          const skip = { pass: label, ...parseSkip(line) };
          skip.expected = expected.includes(skip.reason);
          skips.push(skip);
          if (ci && !skip.expected) counts.failed++;
          else counts.skipped++;
        } else if (/^ok \d+/.test(line)) counts.passed++;
      }
    });
    child.on('close', (code) => {
      // A crash without a TAP failure line (a worker dying, a syntax error) still fails.
      if (code !== 0 && counts.failed === 0) counts.failed++;
      console.log(
        `--- ${label}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`,
      );
      for (const k of Object.keys(totals)) totals[k] += counts[k];
      resolve();
    });
  });
}

await runAva(
  'unit, integration and security on PGlite',
  ['test/unit', 'test/integration', 'test/security'],
  { ARBOR_TEST_DB: 'pglite' },
  { expected: [POSTGRES_ONLY] },
);

// ARBOR_TEST_NODE_LTS: a node binary (scripts/node-lts/install.sh) to run the PGlite suite
// on as well, so the Node the image ships is tested besides the machine's.
const nodeLts = process.env.ARBOR_TEST_NODE_LTS;
if (nodeLts && !existsSync(nodeLts)) {
  console.log(`\nNode LTS: no ${nodeLts} (ARBOR_TEST_NODE_LTS)`);
  totals.failed++;
} else if (nodeLts) {
  await runAva(
    'unit and integration on PGlite, Node LTS',
    ['test/unit', 'test/integration'],
    { ARBOR_TEST_DB: 'pglite' },
    { nodeBin: nodeLts, expected: [POSTGRES_ONLY] },
  );
} else if (ci) {
  // .ci/run installs it (scripts/node-lts/install.sh): without it a whole pass would vanish.
  console.log('\nNode LTS is required here (CI) but ARBOR_TEST_NODE_LTS is not set');
  totals.failed++;
} else {
  console.log('\nSKIPPED the Node LTS pass: ARBOR_TEST_NODE_LTS is not set');
}

if (await reachable(pgUrl)) {
  await runAva('integration and security on PostgreSQL', ['test/integration', 'test/security'], {
    ARBOR_TEST_DB: 'postgres',
    ARBOR_TEST_PG_URL: pgUrl,
  });
} else if (requirePg) {
  console.log(`PostgreSQL is required here but ${new URL(pgUrl).host} does not answer`);
  totals.failed++;
} else {
  console.log(
    `\nSKIPPED integration on PostgreSQL: nothing answers at ${new URL(pgUrl).host} (set ARBOR_TEST_PG_URL)`,
  );
}

/** Whether `cmd` is on PATH (Debian puts pgbouncer in /usr/sbin, which PATH may lack). */
function installed(cmd) {
  try {
    execFileSync('sh', ['-c', `PATH="$PATH:/usr/sbin" command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// The integration tests that exercise every store's statements (the named prepared ones of
// the hot paths among them), the outbox, migrations and an outage, run again through
// Debian's PgBouncer in transaction mode with DATABASE_POOLER=transaction (README,
// docs/operations.md). A subset, to keep CI's time: the rest (CLI, HTTP framing, OIDC
// sign-in plumbing, metrics, locks on a data directory) does not reach the database
// differently.
const POOLER_PASS = [
  'access',
  'access-requests',
  'access-simulate',
  'access-simulate-not-before',
  'access-simulate-permits',
  'access-simulate-real.property',
  'access-simulate-visibility',
  'account-associations',
  'advisories',
  'audit',
  'binding-expiry',
  'binding-not-before',
  'binding-not-before-doors',
  'budgets',
  'db-outage',
  'events',
  'group-invites',
  'groups-api',
  'groups-list',
  'grpc-access-requests',
  'grpc-parity',
  'identities',
  'identities-list',
  'identity-providers',
  'last-used',
  'last-used-flush',
  'managed-resources',
  'migrations',
  'registry-auth',
  'repos',
  'rest-fast-reads',
  'role-bindings',
  'role-bindings-list',
  'roles',
  'sts',
  'tags',
  'unused-access',
  'user-sign-in',
].map((f) => `test/integration/${f}.test.ts`);

if (!(await reachable(pgUrl))) {
  console.log('\nSKIPPED integration through PgBouncer: no PostgreSQL');
} else if (installed('pgbouncer')) {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-pgbouncer-'));
  rmdirSync(dir); // the script makes it, owned by the user PgBouncer runs as
  const script = (...args) =>
    execFileSync('bash', ['scripts/pgbouncer/pgbouncer.sh', ...args], { encoding: 'utf8' }).trim();
  let poolerUrl;
  try {
    poolerUrl = script('start', dir, String(await freePort()), pgUrl);
  } catch (e) {
    console.log(`PgBouncer did not start: ${e.message}`);
    totals.failed++;
  }
  if (poolerUrl) {
    try {
      await runAva(
        'integration through PgBouncer (transaction mode)',
        POOLER_PASS,
        {
          ARBOR_TEST_DB: 'postgres',
          ARBOR_TEST_PG_URL: pgUrl,
          ARBOR_TEST_PG_POOLER_URL: poolerUrl,
        },
        { expected: [NOT_POOLED] },
      );
    } finally {
      script('stop', dir);
    }
  }
} else if (requirePg) {
  console.log('pgbouncer is required here (CI) but not installed');
  totals.failed++;
} else {
  console.log('\nSKIPPED integration through PgBouncer: pgbouncer is not installed');
}

// Each test of test/ha makes the PostgreSQL servers it needs from the installed packages
// (the failover test a pg_auto_failover formation, scripts/postgres-ha/cluster.sh; the
// replica tests a streaming replica), and reports itself skipped without them, failed in CI.
if (!installed('pg_autoctl')) {
  if (requirePg) {
    console.log('pg_autoctl (pg_auto_failover) is required here (CI) but not installed');
    totals.failed++;
  } else console.log('\nthe failover test skips itself: pg_autoctl is not installed');
}
// One file at a time: each runs several PostgreSQL servers on the machine's few cores.
await runAva('PostgreSQL high availability', ['--concurrency=1', 'test/ha'], {});

const e2eEnv = (await reachable(pgUrl))
  ? { ARBOR_TEST_DB: 'postgres', ARBOR_TEST_PG_URL: pgUrl }
  : { ARBOR_TEST_DB: 'pglite' };
await runAva('end to end', ['test/e2e'], e2eEnv, {
  expected: e2eEnv.ARBOR_TEST_DB === 'pglite' ? [POSTGRES_ONLY] : [],
});

// Every skip with its reason, the unexpected ones first (failures under CI).
const unexpected = skips.filter((s) => !s.expected);
if (skips.length > 0) {
  console.log(`\n${skips.length} skipped tests, ${unexpected.length} unexpected:`);
  for (const s of [...unexpected, ...skips.filter((x) => x.expected)]) {
    const mark = s.expected ? 'expected  ' : ci ? 'FAILED    ' : 'UNEXPECTED';
    console.log(`  ${mark} [${s.pass}] ${s.title}: ${s.reason}`);
  }
}

// The one summary line over every run above.
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exitCode = totals.failed > 0 ? 1 : 0;
