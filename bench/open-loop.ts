/**
 * `npm run bench -- --profile=open-loop [--quick|--scale=…] [--long] [--seconds=N]
 * [--load=0.5] [--pool=256] [--only=get,access.check,sts,registry.token]`: the benchmark in the shape
 * others publish. Arbor serves TLS (a self-signed P-256 certificate made
 * with openssl); each case is first driven to saturation by a closed loop of 16 clients,
 * then paced by an open-loop generator at a fixed arrival rate (`--load` × saturation,
 * default half), with every latency measured from the request's intended send time, so a
 * server that stalls cannot hide its queue. The STS exchange and the registry token open a
 * new TLS connection per request (a full handshake: no session is resumed), as a client
 * that runs once does; get and check keep their connections, as an SDK's pool does.
 * `sts.resumed` is the STS exchange on a new connection per request that resumes an earlier
 * connection's TLS session (a returning client, whose https.Agent keeps its tickets): what
 * the shared session tickets save over `sts`'s full handshakes. Two cases take it apart and
 * run only when named: `sts.kept` (the exchange on kept-alive connections) and
 * `healthz.resumed` (a new resumed connection that asks for nothing but /healthz).
 * Throughput per Arbor vCPU is answers / Arbor's CPU seconds, read from /proc/<pid>/stat.
 * `--long` runs each paced case for 5 minutes (`--seconds=N` for any other length);
 * `--main=<tree>/dist/src/main.js` runs another tree's build (a before/after).
 * Writes bench/results/<date>-<scale>-open-loop.{json,md}.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { selfSigned } from '../test/helpers/self-signed.js';
import { exchangeBody, prepareSts } from './fixtures.js';
import { percentile, startSampling, type RunResult } from './load.js';
import { renderOpenLoop, type OpenCase, type OpenResult } from './open-loop-report.js';
import { startArbor, type Child } from './procs.js';
import {
  ADMIN_TOKEN,
  CONNECTIONS,
  REGISTRY_REPO,
  REGISTRY_SERVICE,
  orgUid,
  teamUid,
} from './scale.js';
import type { Scale } from './scale.js';
import type { TLSSocket } from 'node:tls';

type Log = (m: string) => void;

/** Cases that take a figure apart rather than state one: run only when `--only` names them. */
const DIAGNOSTIC = new Set(['sts.kept', 'healthz.resumed']);

/** Connections of a `resume` case whose TLS session was, and was not, resumed. */
const resumption = { resumed: 0, full: 0 };

/** One HTTPS request; resolves the status (0: the connection failed). */
function send(base: URL, ca: Buffer, c: OpenCase, body: string | undefined, agent?: https.Agent) {
  return new Promise<number>((ok) => {
    const headers: Record<string, string> = { ...c.headers };
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    if (c.fresh) headers.connection = 'close';
    const req = https.request(
      {
        host: base.hostname,
        port: base.port,
        method: c.method,
        path: c.path,
        headers,
        ca,
        // A fresh connection per request: no agent, so no kept socket and no TLS session.
        agent: agent ?? false,
      },
      (res) => {
        if (c.resume) {
          if ((res.socket as TLSSocket).isSessionReused()) resumption.resumed++;
          else resumption.full++;
        }
        res.on('data', () => undefined);
        res.on('end', () => ok(res.statusCode ?? 0));
        res.on('error', () => ok(0));
      },
    );
    req.on('error', () => ok(0));
    req.setTimeout(30_000, () => req.destroy());
    req.end(body);
  });
}

/**
 * An SDK's pool of kept-alive connections: up to `pool` of them (`--pool=N`, default 256),
 * so that an open loop whose answers fall behind opens more (each a full TLS handshake the
 * server pays for), as a client's pool does under a backlog.
 */
const keptAlive = (ca: Buffer, pool: number) =>
  new https.Agent({ keepAlive: true, maxSockets: pool, ca });

/**
 * The connections of a case: none kept (a full handshake each), none kept but their TLS
 * sessions kept (a new connection resumes one), or a kept-alive pool.
 */
const agentOf = (ca: Buffer, c: OpenCase) =>
  c.fresh
    ? c.resume
      ? new https.Agent({ keepAlive: false, maxCachedSessions: 100, ca })
      : undefined
    : keptAlive(ca, c.pool);

/**
 * Closed loop: `CONNECTIONS` clients, one request in flight each, for `seconds`. What the
 * server answers at saturation, and its CPU per answer there.
 */
async function saturate(
  base: URL,
  ca: Buffer,
  c: OpenCase,
  seconds: number,
  pid: number,
  db: string,
): Promise<RunResult> {
  const agent = agentOf(ca, c);
  const lat: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let k = 0;
  const sampling = startSampling(pid, db);
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const status = await send(base, ca, c, c.bodies?.[k++ % c.bodies.length], agent);
        if (status >= 200 && status < 300) lat.push(performance.now() - t);
        else if (status === 0) errors++;
        else non2xx++;
      }
    }),
  );
  agent?.destroy();
  return sampling.finish(lat, non2xx, errors);
}

/**
 * Open loop: request i is due at start + i / rate, sent when due whatever is outstanding,
 * and timed from when it was due. Runs `seconds`, then waits for the last answers.
 */
async function paced(
  base: URL,
  ca: Buffer,
  c: OpenCase,
  rate: number,
  seconds: number,
  pid: number,
  db: string,
): Promise<OpenResult> {
  const agent = agentOf(ca, c);
  const total = Math.max(1, Math.round(rate * seconds));
  const lat: number[] = [];
  const fromSend: number[] = [];
  const lags: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  let answered = 0;
  const sampling = startSampling(pid, db);
  const t0 = performance.now();
  const due = (i: number) => t0 + (i * 1000) / rate;
  await new Promise<void>((done) => {
    const one = (intended: number, body: string | undefined) => {
      const sentAt = performance.now();
      void send(base, ca, c, body, agent).then((status) => {
        const now = performance.now();
        if (status >= 200 && status < 300) {
          lat.push(now - intended);
          fromSend.push(now - sentAt);
        } else if (status === 0) errors++;
        else non2xx++;
        if (++answered === total) done();
      });
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && due(sent) <= now) {
        lags.push(now - due(sent));
        one(due(sent), c.bodies?.[sent % c.bodies.length]);
        sent++;
      }
      if (sent < total) setTimeout(tick, Math.max(0, due(sent) - performance.now()));
    };
    tick();
  });
  agent?.destroy();
  const elapsed = (performance.now() - t0) / 1000;
  const r = sampling.finish(lat, non2xx, errors);
  const sorted = Float64Array.from(lat).sort();
  const sortedSend = Float64Array.from(fromSend).sort();
  const sortedLags = Float64Array.from(lags).sort();
  return {
    sent,
    ok: lat.length,
    non2xx,
    errors,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    maxLagMs: sortedLags[sortedLags.length - 1] ?? 0,
    lagP99: percentile(sortedLags, 99),
    sentP50: percentile(sortedSend, 50),
    sentP95: percentile(sortedSend, 95),
    sentP99: percentile(sortedSend, 99),
    rps: lat.length / elapsed,
    serverCpuMs: r.serverCpuMs,
    pgCpuMs: r.pgCpuMs,
    loadgenCpuMs: r.loadgenCpuMs,
    perVcpu: 1000 / r.serverCpuMs,
    rssPeakMB: r.rssPeakMB,
    othersCpuShare: r.othersCpuShare,
  };
}

/** One JSON request over https to Arbor (the fixtures: a token, a repository). */
async function call(
  base: URL,
  ca: Buffer,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; json: unknown }> {
  return new Promise((ok, fail) => {
    const req = https.request(
      { host: base.hostname, port: base.port, method, path, headers, ca, agent: false },
      (res) => {
        let text = '';
        res.on('data', (b: Buffer) => (text += b.toString()));
        res.on('end', () =>
          ok({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : {} }),
        );
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

export interface OpenLoopOptions {
  scale: Scale;
  db: { url: string; name: string };
  c: pg.ClientBase;
  args: readonly string[];
  log: Log;
  meta: Record<string, unknown>;
  results: string;
  stamp: string;
}

function num(args: readonly string[], name: string, d: number): number {
  const v = args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const n = v === undefined ? d : Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}=${v}: a positive number`);
  return n;
}

export async function openLoopProfile(o: OpenLoopOptions): Promise<void> {
  const { scale, db, c, args, log } = o;
  const long = args.includes('--long');
  const seconds = num(args, 'seconds', long ? 300 : scale.name === 'quick' ? 10 : 30);
  const probeSeconds = num(args, 'probe-seconds', scale.name === 'quick' ? 3 : 5);
  const load = num(args, 'load', 0.5);
  const pool = num(args, 'pool', 256);
  const only = args
    .find((a) => a.startsWith('--only='))
    ?.slice(7)
    .split(',');
  const pem = selfSigned();
  if (!pem) throw new Error('the open-loop profile needs openssl to make its certificate');
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(certFile, pem.cert);
  writeFileSync(keyFile, pem.key, { mode: 0o600 });
  const ca = pem.cert;
  let arbor: Child | undefined;
  let stopIssuer: (() => Promise<void>) | undefined;
  try {
    // `--main=<tree>/dist/src/main.js`: another build of Arbor, for a before/after.
    const main = args.find((a) => a.startsWith('--main='))?.slice(7);
    arbor = await startArbor(db.url, [], 1, {}, { certFile, keyFile, ca }, undefined, main);
    const base = new URL(arbor.url);
    log(`Arbor on ${arbor.url} (TLS, self-signed P-256), pid ${arbor.pid}`);
    const sts = await prepareSts(c, arbor.url, scale);
    stopIssuer = () => sts.issuer.stop();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const ex = await call(
      base,
      ca,
      'POST',
      '/sts/exchange',
      { ...form, authorization: `Bearer ${sts.upstream}` },
      exchangeBody(arbor.url, sts.identities[0]!),
    );
    const token = (ex.json as { token?: string }).token;
    if (ex.status !== 200 || !token) throw new Error(`STS exchange: ${ex.status}`);
    const org = orgUid(0);
    const repo = await call(
      base,
      ca,
      'POST',
      `/registry/v2beta1/repos/${org}`,
      { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      JSON.stringify({ name: REGISTRY_REPO }),
    );
    if (repo.status !== 200 && repo.status !== 409) throw new Error(`repo: ${repo.status}`);
    const { rows } = await c.query<{ uid: string }>(
      'SELECT uid FROM groups WHERE parent_uid = $1 ORDER BY uid LIMIT 1',
      [teamUid(0, 0)],
    );
    const getUid = rows[0]!.uid;
    const auth = { authorization: `Bearer ${token}` };
    const scope = `repository:${org}/${REGISTRY_REPO}:pull`;
    const cases: OpenCase[] = [
      {
        name: 'get',
        label: 'get group by uid, viewer at org (kept-alive connections)',
        method: 'GET',
        path: `/iam/v2beta1/groups/${getUid}`,
        headers: auth,
        fresh: false,
        pool,
      },
      {
        name: 'access.check',
        label: 'access check with proof, same group (kept-alive connections)',
        method: 'POST',
        path: '/iam/v2beta1/access:check',
        headers: { ...auth, 'content-type': 'application/json' },
        bodies: [JSON.stringify({ capability: 'groups.list', groupUid: getUid })],
        fresh: false,
        pool,
      },
      {
        name: 'sts',
        label: `STS exchange, ${sts.identities.length} identities, a new TLS connection each`,
        method: 'POST',
        path: '/sts/exchange',
        headers: { ...form, authorization: `Bearer ${sts.upstream}` },
        bodies: sts.identities.map((id) => exchangeBody(arbor!.url, id)),
        fresh: true,
        pool,
      },
      {
        name: 'sts.resumed',
        label: `STS exchange, ${sts.identities.length} identities, a new TLS connection each, its session resumed`,
        method: 'POST',
        path: '/sts/exchange',
        headers: { ...form, authorization: `Bearer ${sts.upstream}` },
        bodies: sts.identities.map((id) => exchangeBody(arbor!.url, id)),
        fresh: true,
        resume: true,
        pool,
      },
      {
        // The exchange without the connection: with sts.resumed, what a new connection costs.
        name: 'sts.kept',
        label: `STS exchange, ${sts.identities.length} identities, kept-alive connections`,
        method: 'POST',
        path: '/sts/exchange',
        headers: { ...form, authorization: `Bearer ${sts.upstream}` },
        bodies: sts.identities.map((id) => exchangeBody(arbor!.url, id)),
        fresh: false,
        pool,
      },
      {
        // The connection without the exchange: next to bench/tls-floor.ts --resume, what
        // Arbor's listener and HTTP server add to a resumed connection beyond node:https.
        name: 'healthz.resumed',
        label: 'GET /healthz, a new TLS connection each, its session resumed',
        method: 'GET',
        path: '/healthz',
        headers: {},
        fresh: true,
        resume: true,
        pool,
      },
      {
        name: 'registry.token',
        label: "registry token for a pull (crane's request), a new TLS connection each",
        method: 'GET',
        path:
          `/auth/registry/token?scope=${encodeURIComponent(scope)}` +
          `&service=${encodeURIComponent(REGISTRY_SERVICE)}`,
        headers: {
          authorization: `Basic ${Buffer.from(`_token:${token}`).toString('base64')}`,
          'user-agent': 'crane/v0.20.6 go-containerregistry/v0.20.6',
        },
        fresh: true,
        pool,
      },
    ].filter((x) => (only ? only.includes(x.name) : !DIAGNOSTIC.has(x.name))) as OpenCase[];
    const out: Array<{ case: OpenCase; saturation: RunResult; rate: number; run: OpenResult }> = [];
    for (const oc of cases) {
      log(`case ${oc.name}: ${oc.label}`);
      await saturate(base, ca, oc, 1, arbor.pid, db.name); // warm-up
      const sat = await saturate(base, ca, oc, probeSeconds, arbor.pid, db.name);
      const rate = Math.max(1, Math.round(sat.rps * load));
      log(
        `  saturation (${CONNECTIONS} clients, ${probeSeconds} s): ${sat.rps.toFixed(0)}/s, ` +
          `Arbor ${sat.serverCpuMs.toFixed(3)} CPU ms/req = ${(1000 / sat.serverCpuMs).toFixed(0)}/s per vCPU` +
          (sat.errors + sat.non2xx ? `, ${sat.non2xx} non-2xx, ${sat.errors} failed` : ''),
      );
      const run = await paced(base, ca, oc, rate, seconds, arbor.pid, db.name);
      log(
        `  open loop at ${rate}/s for ${seconds} s: p50 ${run.p50.toFixed(2)} p95 ${run.p95.toFixed(2)} ` +
          `p99 ${run.p99.toFixed(2)} ms (from the actual send ${run.sentP99.toFixed(2)}; ` +
          `generator late p99 ${run.lagP99.toFixed(1)} ms), ${run.rps.toFixed(0)}/s answered, ` +
          `${run.perVcpu.toFixed(0)}/s per vCPU, RSS ${run.rssPeakMB.toFixed(0)} MB, ` +
          `others' CPU ${(run.othersCpuShare * 100).toFixed(0)} %` +
          (run.errors + run.non2xx ? `, ${run.non2xx} non-2xx, ${run.errors} failed` : ''),
      );
      if (oc.resume) {
        const { resumed, full } = resumption;
        log(`  TLS sessions resumed on ${resumed} of ${resumed + full} new connections`);
        if (full > resumed) throw new Error(`${oc.name}: most connections did a full handshake`);
      }
      out.push({ case: oc, saturation: sat, rate, run });
    }
    const result = { meta: { ...o.meta, seconds, probeSeconds, load, tls: 'P-256' }, cases: out };
    writeFileSync(join(o.results, `${o.stamp}-open-loop.json`), JSON.stringify(result, null, 2));
    const md = renderOpenLoop(result.meta, out);
    writeFileSync(join(o.results, `${o.stamp}-open-loop.md`), md);
    console.log(`\n${md}`);
    log(`wrote bench/results/${o.stamp}-open-loop.{json,md}`);
  } finally {
    await arbor?.stop();
    await stopIssuer?.();
    rmSync(dir, { recursive: true, force: true });
  }
}
