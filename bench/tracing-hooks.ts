/**
 * `npx tsx bench/tracing-hooks.ts [--requests=20000] [--rounds=5] [--sampling=0.1] [--sql=2]`:
 * what tracing's hooks cost one request, without a server or a database around them, so
 * that a busy machine blurs little: CPU time of the process (`process.cpuUsage`) over a
 * fixed number of simulated requests, in three child processes run in turn each round:
 *
 * - `absent`: the request alone, src/tracing never imported (the code before tracing);
 * - `off`: the request inside the doors' hooks (`startServerSpan`, `within`,
 *   `endServerSpan`, a `startChildSpan` per SQL statement, the exemplar's `sampledTraceId`,
 *   the log mixin's `logContext`), tracing off: what every process without OTEL_* pays;
 * - `on`: the same with the SDK registered from OTEL_* variables as `arbor serve` does
 *   (parentbased_traceidratio at `--sampling`, batched OTLP/HTTP export to a receiver in
 *   this process that accepts and discards), the export's CPU included.
 *
 * A simulated request is `--sql` statements' worth of awaits and a small JSON answer, in an
 * AsyncLocalStorage of its own as Arbor's requests are (so that Node's promise hooks are on
 * in every mode, as they are in the server). Prints the median CPU µs per request of each
 * mode, and the spread.
 *
 * At high sampling these short runs make spans faster than the batch processor's queue
 * (2,048) drains, and the spans it drops are never encoded or sent: a sampled span looks
 * cheaper here than it is in a server. Take the sampled cost from `--only=tracing`.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AsyncLocalStorage } from 'node:async_hooks';
import type * as Spans from '../src/tracing/spans.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const requests = arg('requests', 20_000);
const rounds = arg('rounds', 5);
const sampling = arg('sampling', 0.1);
const sql = arg('sql', 2);
const mode = args.find((a) => a.startsWith('--mode='))?.slice('--mode='.length);

type Mode = 'absent' | 'off' | 'on';
type Hooks = typeof Spans;

/** The app's own AsyncLocalStorage, run per request (as consistency and preconditions are). */
const scope = new AsyncLocalStorage<number>();

/**
 * One simulated request, the same code in every mode: the hooks, when given, are called
 * where the doors, the query observer, the access service and the logger call them.
 * A statement is a few awaits; the answer, some JSON.
 */
async function request(i: number, h: Hooks | undefined): Promise<string> {
  const handle = async (): Promise<string> => {
    let status = 500;
    try {
      let rows = 0;
      for (let q = 0; q < sql; q++) {
        const s = h?.startChildSpan(
          () => 'SELECT',
          () => ({
            'db.system.name': 'postgresql',
            'db.operation.name': 'SELECT',
            'db.query.text': 'select * from groups where uid = $1',
          }),
        );
        rows += await Promise.resolve(q).then((x) => x + 1);
        s?.end();
      }
      await new Promise<void>((r) => setImmediate(r));
      h?.spanEvent('access.decision', { 'arbor.access.allowed': true });
      h?.logContext();
      h?.sampledTraceId();
      status = 200;
      return JSON.stringify({ uid: `g-${i}`, name: 'group', rows, etag: 'W/"1"' });
    } finally {
      h?.endServerSpan(span, () => ({ 'http.response.status_code': status }), status >= 500);
    }
  };
  const span = h?.startServerSpan(
    'GET /iam/v2beta1/groups/{uid}',
    { host: 'bench', accept: 'application/json' },
    `r-${i}`,
    () => ({
      'http.request.method': 'GET',
      'url.path': `/iam/v2beta1/groups/g-${i}`,
      'network.peer.address': '127.0.0.1',
      'http.route': '/iam/v2beta1/groups/{uid}',
    }),
  );
  return h === undefined ? handle() : h.within(span, handle);
}

/** A child: runs `requests` twice (warm-up, then measured) and prints CPU µs per request. */
async function child(m: Mode): Promise<void> {
  let h: Hooks | undefined;
  let stop: (() => Promise<void>) | undefined;
  if (m !== 'absent') h = await import('../src/tracing/spans.js');
  if (m === 'on') {
    const { startTracing } = await import('../src/tracing/start-tracing.js');
    stop = await startTracing('0.0.0');
    if (stop === undefined) throw new Error('tracing did not start');
  }
  const one = (i: number) => scope.run(i, () => request(i, h));
  const batch = async () => {
    // 16 at once, as the load generator's connections are.
    for (let i = 0; i < requests; i += 16)
      await Promise.all(Array.from({ length: 16 }, (_, k) => one(i + k)));
  };
  await batch();
  const t0 = process.cpuUsage();
  await batch();
  if (stop) await stop(); // the spans still queued are exported (and counted) too
  const used = process.cpuUsage(t0);
  process.stdout.write(`${((used.user + used.system) / requests).toFixed(3)}\n`);
}

function runChild(m: Mode, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = spawn(
      process.execPath,
      [...process.execArgv, import.meta.filename, `--mode=${m}`, ...args],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.on('exit', (code) =>
      code === 0 ? resolve(Number(out.trim())) : reject(new Error(`${m} exited ${code}`)),
    );
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  let exported = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exported++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const env = {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(sampling),
  };
  const us: Record<Mode, number[]> = { absent: [], off: [], on: [] };
  try {
    for (let r = 0; r < rounds; r++)
      for (const m of ['absent', 'off', 'on'] as const) us[m].push(await runChild(m, env));
  } finally {
    receiver.close();
  }
  const fmt = (xs: number[]) =>
    `median ${median(xs).toFixed(2)} µs (${xs.map((x) => x.toFixed(2)).join(', ')})`;
  console.log(
    `node ${process.version}, ${requests} requests × ${rounds} rounds, ${sql} statements each, ` +
      `sampling ${sampling}`,
  );
  for (const m of ['absent', 'off', 'on'] as const) console.log(`${m.padEnd(6)} ${fmt(us[m])}`);
  const diff = (a: Mode, b: Mode) => us[a].map((x, i) => x - us[b][i]!);
  console.log(`off − absent, per round: ${fmt(diff('off', 'absent'))}`);
  console.log(`on − absent, per round:  ${fmt(diff('on', 'absent'))}`);
  console.log(`OTLP export requests received: ${exported}`);
}

if (mode === undefined) await main();
else await child(mode as Mode);
