/**
 * Audit and event delivery costs, on the backend the tests use:
 *
 *   ARBOR_TEST_DB=postgres npx tsx bench/events-bench.ts [--writes=2000] [--events=2000] [--smoke]
 *
 * 1. Write throughput: N group creates over HTTP (16 in flight) against a server with
 *    auditing off (the services record nothing), on, and on with a subscription above the
 *    groups (each write also queues an outbox row). Runs alternate between the servers so
 *    they see the same drift in the machine's load; medians of 3 runs.
 * 2. Delivery throughput: M events queued with the worker stopped, then the worker started
 *    against a loopback receiver (1 and 4 subscriptions): events acknowledged per second.
 *
 * Prints Markdown. Figures are only meaningful on a quiet machine (see BENCHMARKS.md).
 */
import { pino } from 'pino';
import { createGroup } from '../test/helpers/fixtures.js';
import { startEventSink, until } from '../test/helpers/event-sink.js';
import { startServer, type TestServer } from '../test/helpers/server.js';

const args = process.argv.slice(2);
const SMOKE = args.includes('--smoke');
const num = (name: string, fallback: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const WRITES = num('writes', SMOKE ? 60 : 2000);
const EVENTS = num('events', SMOKE ? 60 : 2000);
const RUNS = SMOKE ? 1 : 3;
const IN_FLIGHT = 16;
const log = pino({ level: 'info' });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** N creates under a fresh group, `IN_FLIGHT` at a time. @returns writes per second. */
async function writeRun(s: TestServer, parent: string, n: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const res = await s.admin.post(`/iam/v2beta1/groups/${parent}`, { name: `w${i}` });
      if (res.status !== 200) throw new Error(`write ${i}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return n / ((performance.now() - started) / 1000);
}

async function writeThroughput(): Promise<string[]> {
  const env = { ARBOR_ALLOW_PRIVATE_SINKS: 'true' };
  const off = await startServer(env, { audit: false });
  const on = await startServer(env);
  const sub = await startServer(env);
  const sink = await startEventSink();
  try {
    const subOrg = await createGroup(sub.admin, 'bench-sub');
    // The worker stays stopped: this measures the write path, not delivery.
    await sub.admin.post(`/events/v2beta1/subscriptions/${subOrg}`, { name: 'b', sink: sink.url });
    const variants: Array<[string, TestServer, () => Promise<string>]> = [
      ['auditing off', off, () => createGroup(off.admin, `o${Math.random()}`)],
      ['auditing on', on, () => createGroup(on.admin, `a${Math.random()}`)],
      [
        'auditing on + 1 subscription (outbox row per write)',
        sub,
        () => createGroup(sub.admin, `s${Math.random()}`, subOrg),
      ],
    ];
    const results = new Map<string, number[]>();
    for (let r = 0; r < RUNS; r++) {
      for (const [name, s, fresh] of variants) {
        const rate = await writeRun(s, await fresh(), WRITES);
        results.set(name, [...(results.get(name) ?? []), rate]);
        log.info({ variant: name, run: r, writesPerSecond: Math.round(rate) }, 'write run');
      }
    }
    return [
      `| write path (${WRITES} group creates, ${IN_FLIGHT} in flight) | writes/s (median of ${RUNS}) |`,
      '|---|---|',
      ...variants.map(([name]) => `| ${name} | ${median(results.get(name)!).toFixed(0)} |`),
    ];
  } finally {
    await Promise.all([off.close(), on.close(), sub.close(), sink.close()]);
  }
}

async function deliveryRun(subscriptions: number): Promise<number> {
  const s = await startServer({ ARBOR_ALLOW_PRIVATE_SINKS: 'true', ARBOR_EVENTS_POLL_MS: '50' });
  const sinks = await Promise.all(Array.from({ length: subscriptions }, () => startEventSink()));
  try {
    const org = await createGroup(s.admin, 'bench-delivery');
    for (const [i, k] of sinks.entries()) {
      await s.admin.post(`/events/v2beta1/subscriptions/${org}`, { name: `s${i}`, sink: k.url });
    }
    const parent = await createGroup(s.admin, 'events', org);
    await writeRun(s, parent, EVENTS);
    const per = EVENTS + subscriptions + 1; // the groups, the subscriptions after each, `events`
    const started = performance.now();
    s.arbor.delivery.start();
    await until(
      'all delivered',
      () => sinks.every((k) => k.accepted().length >= per - subscriptions),
      30 * 60_000,
      20,
    );
    const total = sinks.reduce((n, k) => n + k.accepted().length, 0);
    return total / ((performance.now() - started) / 1000);
  } finally {
    await s.close();
    for (const k of sinks) await k.close();
  }
}

async function deliveryThroughput(): Promise<string[]> {
  const rows: string[] = [];
  for (const n of [1, 4]) {
    const rates: number[] = [];
    for (let r = 0; r < RUNS; r++) rates.push(await deliveryRun(n));
    rows.push(`| ${n} | ${median(rates).toFixed(0)} |`);
    log.info({ subscriptions: n, eventsPerSecond: rates.map(Math.round) }, 'delivery');
  }
  return [
    `| subscriptions (${EVENTS} queued events each) | events acknowledged/s (median of ${RUNS}) |`,
    '|---|---|',
    ...rows,
  ];
}

const out = [
  `# Audit and event delivery (${process.env.ARBOR_TEST_DB ?? 'pglite'})`,
  '',
  ...(await writeThroughput()),
  '',
  ...(await deliveryThroughput()),
];
console.log(out.join('\n'));
