import pg from 'pg';
import type { CapturedCase } from './baseline-server.js';
import { registryTokenRequest } from './fixtures.js';
import { PACED_RATE, measure, summarise, type RunResult, type Target } from './load.js';
import type { Child } from './procs.js';
import { ratioOf, type CaseResult } from './report.js';
import { EDITOR_ROLE, identityUid, orgUid, whoCanBindings, type Scale } from './scale.js';

export interface LoadCase {
  name: string;
  label: string;
  arbor?: Target;
  baseline?: Target;
}

export interface CaseEnv {
  scale: Scale;
  db: { url: string; name: string };
  arbor: Child;
  baseline: Child;
  captured: Record<string, CapturedCase>;
  log: (m: string) => void;
}

/**
 * Watch pg_stat_activity while `during` runs: the statements Arbor's backends executed.
 * Proves the SQL captured from knex is the SQL the running server sends.
 */
async function watchArborSql(url: string, during: Promise<unknown>): Promise<Set<string>> {
  const mon = new pg.Client({ connectionString: url, application_name: 'arbor-bench-monitor' });
  await mon.connect();
  const seen = new Set<string>();
  let done = false;
  const finished = during.finally(() => (done = true));
  while (!done) {
    const r = await mon.query<{ query: string }>(
      "SELECT query FROM pg_stat_activity WHERE application_name = 'arbor'",
    );
    for (const row of r.rows) seen.add(row.query);
    await new Promise((ok) => setTimeout(ok, 20));
  }
  await finished;
  await mon.end();
  return seen;
}

/** One run on one line of the log: latencies, throughput, and any failures. */
export const fmtRun = (x?: RunResult) =>
  x
    ? `p50 ${x.p50.toFixed(2)} p99 ${x.p99.toFixed(2)} ms ${x.rps.toFixed(0)}/s` +
      (x.non2xx + x.errors ? ` ERRORS ${x.non2xx} non-2xx, ${x.errors} failed` : '')
    : '–';

/**
 * One case: warm-up on each server, then `runs` measured runs alternating Arbor and the
 * baseline (so both see the same drift in the machine's load), summarised by medians.
 */
export async function runCase(
  env: CaseEnv,
  c: LoadCase,
): Promise<{ result: CaseResult; observed?: boolean }> {
  const { scale, db, arbor, baseline, log } = env;
  log(`case ${c.name}: ${c.label}`);
  let observed: boolean | undefined;
  if (c.arbor) {
    const warm = measure(c.arbor, scale.warmupSeconds, arbor.pid, db.name);
    const seen = await watchArborSql(db.url, warm);
    await warm;
    const cc = env.captured[c.name];
    if (cc) observed = [cc.page, cc.count].every((q) => !q || seen.has(q.sql));
  }
  if (c.baseline) await measure(c.baseline, scale.warmupSeconds, baseline.pid, db.name);
  const a: RunResult[] = [];
  const b: RunResult[] = [];
  for (let r = 1; r <= scale.runs; r++) {
    if (c.arbor) a.push(await measure(c.arbor, scale.runSeconds, arbor.pid, db.name));
    if (c.baseline) b.push(await measure(c.baseline, scale.runSeconds, baseline.pid, db.name));
    log(`  run ${r}: arbor ${fmtRun(a[r - 1])} | baseline ${fmtRun(b[r - 1])}`);
  }
  const result: CaseResult = {
    name: c.name,
    label: c.label,
    ...(a.length ? { arbor: { summary: summarise(a), runs: a } } : {}),
    ...(b.length ? { baseline: { summary: summarise(b), runs: b } } : {}),
  };
  const ratio = ratioOf(result);
  return {
    result: ratio ? { ...result, ratio } : result,
    ...(observed === undefined ? {} : { observed }),
  };
}

/** What is loaded, in order: Arbor and the baseline on each list/get, then the STS alone. */
export function loadCases(o: {
  scale: Scale;
  arborUrls: Record<string, string>;
  baselineUrl: string;
  token: string;
  arborUrl: string;
  upstream: string;
  identities: string[];
  exchangeBody: (id: string) => string;
  /** The group `get` reads: check and who-can ask about it too. */
  getUid: string;
  /** `<group uid>/<name>` of a repository the viewer may pull, and the registry's service. */
  registryRepo: string;
  registryService: string;
}): LoadCase[] {
  const s = o.scale;
  const n = (x: number) => x.toLocaleString('en');
  const labels: Record<string, string> = {
    'children.p1': `children_of org (${n(s.teams)}), by name, page 1`,
    'children.deep': `same, page ${n(s.deepPage)} by cursor`,
    'descendants.name': `descendants_of org (${n(s.teams + s.wideTeams * s.projectsPerWide)}), by name, + totalCount`,
    'descendants.created': 'descendants_of org, by created_at, + totalCount',
    get: 'get group by uid, viewer at org',
  };
  const cases: LoadCase[] = Object.entries(labels).map(([name, label]) => ({
    name,
    label,
    arbor: { url: o.arborUrls[name]!, headers: { authorization: `Bearer ${o.token}` } },
    baseline: { url: `${o.baselineUrl}/case/${name}` },
  }));
  cases.push({
    name: 'descendants.name.nocount',
    label: 'baseline only: descendants by name, page query alone',
    baseline: { url: `${o.baselineUrl}/case/descendants.name?count=0` },
  });
  const auth = { authorization: `Bearer ${o.token}` };
  cases.push({
    name: 'access.check',
    label: 'access check with proof (the caller itself), same group as get',
    arbor: {
      url: `${o.arborUrl}/iam/v2beta1/access:check`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ capability: 'groups.list', groupUid: o.getUid }),
    },
  });
  // The same get and check at a fixed rate below saturation (report.ts, the check's tail target).
  const getCase = cases.find((c) => c.name === 'get')!;
  const checkCase = cases[cases.length - 1]!;
  for (const c of [getCase, checkCase])
    cases.push({
      name: `${c.name}.paced`,
      label: `${c.label}, paced at ${n(PACED_RATE)}/s`,
      arbor: { ...c.arbor!, rate: PACED_RATE },
    });
  cases.push({
    name: 'access.whoCan',
    label: `who-can groups.list at the get group (${n(whoCanBindings(s))} bindings above it), first page`,
    arbor: {
      url: `${o.arborUrl}/iam/v2beta1/access:whoCan?group=${o.getUid}&capability=groups.list&page_size=50`,
      headers: auth,
    },
  });
  cases.push(simulateCase(o.arborUrl, auth, s));
  const sts = {
    url: `${o.arborUrl}/sts/exchange`,
    method: 'POST' as const,
    headers: {
      authorization: `Bearer ${o.upstream}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
  };
  cases.push({
    name: 'sts',
    label: `STS exchange, ${o.identities.length} identities, cached JWKS`,
    arbor: {
      ...sts,
      perClient: o.identities.map((id) => ({ path: '/sts/exchange', body: o.exchangeBody(id) })),
    },
  });
  // The same exchange through the standard token endpoint (RFC 8693): a form with the
  // workload token in it, instead of in the Authorization header (bench/oauth-bench.ts
  // compares the two in alternating rounds).
  cases.push({
    name: 'oauth.token',
    label: `the same exchange at /oauth2/token, ${o.identities.length} identities`,
    arbor: {
      url: `${o.arborUrl}/oauth2/token`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      perClient: o.identities.map((id) => ({
        path: '/oauth2/token',
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: o.upstream,
          subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
          identity: id,
        }).toString(),
      })),
    },
  });
  cases.push({
    name: 'registry.token',
    label: "registry token for a pull (crane's request, Basic _token:<API token>), next to STS",
    arbor: registryTokenRequest(o.arborUrl, o.registryRepo, o.registryService, o.token),
  });
  cases.push({
    name: 'sts.one',
    label: `STS exchange, all ${o.identities.length} clients one identity`,
    arbor: { ...sts, body: o.exchangeBody(o.identities[0]!) },
  });
  return cases;
}

/**
 * The simulate case: access:simulate of one binding change at organisation 0's root, which has the
 * seeded bindings of its identities and who-can's below it (30,000 at full scale): bind
 * the editor role there to one of its identities, as the org-0 viewer (who may list the
 * bindings, and so sees the delta, though not permitted to make the change).
 */
export function simulateCase(arborUrl: string, auth: Record<string, string>, s: Scale): LoadCase {
  const n = (x: number) => x.toLocaleString('en');
  const below = s.identitiesPerOrg * s.bindingsPerIdentity + whoCanBindings(s);
  return {
    name: 'access.simulate',
    label: `access:simulate a binding at an org root (${n(below)} bindings below it)`,
    arbor: {
      url: `${arborUrl}/iam/v2beta1/access:simulate`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        changes: [
          {
            createRoleBinding: {
              groupUid: orgUid(0),
              identityUid: identityUid(0, 1, s.teams),
              roleUid: EDITOR_ROLE,
            },
          },
        ],
      }),
    },
  };
}
