import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, toBinary, type DescMethod } from '@bufbuild/protobuf';
import {
  GetGroupRequestSchema,
  GroupsService,
  ListGroupsRequestSchema,
} from '../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { fmtRun } from './cases.js';
import { closedLoop, type Transport } from './closed-loop.js';
import { summarise, type RunResult } from './load.js';
import { startBare, type Child } from './procs.js';
import type { PairResult } from './report.js';
import { PAGE_SIZE, type Scale } from './scale.js';
import { grpcFrame, grpcTransport, http1Transport } from './transports.js';

/**
 * A gRPC case and the REST case it stands next to: the same request to the same Arbor
 * process on the same port, by the same viewer token.
 */
export interface PairCase {
  /** `grpc.<REST case>`, e.g. `grpc.get`. */
  name: string;
  /** The REST case of bench/cases.ts with the same request (and its autocannon figure). */
  rest: string;
  label: string;
  /** The REST case's URL, exactly. */
  restUrl: string;
  method: DescMethod;
  /** The request message, encoded once with the generated types. */
  request: Uint8Array;
}

/** The RPC path of a method: `/arbor.iam.v2beta1.GroupsService/GetGroup`. */
export const rpcPath = (m: DescMethod) => `/${m.parent.typeName}/${m.name}`;

/**
 * The gRPC twins of the REST `get`, `children.p1` and `descendants.name` cases: same uid,
 * same anchor, filter, order and page size (bench/run.ts builds the REST URLs from the
 * same values).
 */
export function grpcPairs(o: {
  restUrls: Record<string, string>;
  getUid: string;
  org: string;
}): PairCase[] {
  const list = (uidp: { childrenOf: string } | { descendantsOf: string }) =>
    toBinary(
      ListGroupsRequestSchema,
      create(ListGroupsRequestSchema, { uidp, orderBy: 'name', pageSize: PAGE_SIZE }),
    );
  const pair = (rest: string, label: string, method: DescMethod, request: Uint8Array) => ({
    name: `grpc.${rest}`,
    rest,
    label,
    restUrl: o.restUrls[rest]!,
    method,
    request,
  });
  return [
    pair(
      'get',
      'GetGroup by uid, viewer at org',
      GroupsService.method.getGroup,
      toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid: o.getUid })),
    ),
    pair(
      'children.p1',
      'ListGroups children_of org, by name, page 1',
      GroupsService.method.listGroups,
      list({ childrenOf: o.org }),
    ),
    pair(
      'descendants.name',
      'ListGroups descendants_of org, by name, + totalCount',
      GroupsService.method.listGroups,
      list({ descendantsOf: o.org }),
    ),
  ];
}

export interface PairEnv {
  scale: Scale;
  db: { name: string };
  arbor: Child;
  token: string;
  log: (m: string) => void;
}

/** Both transports of a pair, on the one Arbor process and port. */
export function pairTransports(arborUrl: string, p: PairCase, token: string) {
  const auth = { authorization: `Bearer ${token}` };
  return {
    rest: http1Transport(p.restUrl, auth),
    grpc: grpcTransport(arborUrl, rpcPath(p.method), p.request, auth),
    grpcShared: grpcTransport(arborUrl, rpcPath(p.method), p.request, auth, { shared: true }),
  };
}

/**
 * One pair: a warm-up of each side, then `runs` measured runs of REST and gRPC by the same
 * closed-loop generator (16 connections, one request in flight each), the order swapped
 * every run so that both sides see the same drift in the machine's load. A side with any
 * failed answer (HTTP status, `grpc-status` other than 0) fails the case: figures of
 * errors would mean nothing.
 * @throws Error naming the side, the counts and the first failure.
 */
export async function runPair(env: PairEnv, p: PairCase): Promise<PairResult> {
  const { db, arbor, log } = env;
  const t = pairTransports(arbor.url, p, env.token);
  // `pid`: whose CPU is measured (Arbor's, or the bare server's for the ceiling).
  const once = async (side: string, transport: Transport, seconds: number, pid = arbor.pid) => {
    const { result, firstFailure } = await closedLoop(transport, seconds, pid, db.name);
    if (result.errors + result.non2xx > 0)
      throw new Error(
        `${p.name}: ${side} had ${result.non2xx} failed answers and ${result.errors} broken ` +
          `connections (first: ${firstFailure})`,
      );
    return result;
  };
  log(`case ${p.name}: ${p.label} (gRPC next to REST, same generator)`);
  const bare = await startBareFor(arbor.url, p, env.token);
  try {
    return await runSides(env, p, t, once, bare);
  } finally {
    await bare.child.stop();
    rmSync(bare.dir, { recursive: true, force: true });
  }
}

/**
 * The bare servers for `p` (bench/bare-server.ts), answering what Arbor answers to the
 * pair's two requests: the REST answer's body and headers as sent, and the gRPC answer's
 * one message frame.
 */
async function startBareFor(arborUrl: string, p: PairCase, token: string) {
  const t = pairTransports(arborUrl, p, token);
  const message = await t.grpc.once();
  // As the generator asks (http1Transport: no Accept-Encoding), so the same bytes come back.
  const res = await new Promise<http.IncomingMessage & { body: Buffer }>((ok, fail) =>
    http
      .get(p.restUrl, { headers: { authorization: `Bearer ${token}` } }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => ok(Object.assign(r, { body: Buffer.concat(chunks) })));
        r.on('error', fail);
      })
      .on('error', fail),
  );
  if (res.statusCode !== 200) throw new Error(`${p.rest}: HTTP ${res.statusCode}`);
  const body = res.body;
  const headers: Record<string, string> = {};
  // What the server framed or stamped itself is left to the bare server's own Node.
  const own = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  for (const [k, v] of Object.entries(res.headers))
    if (!own.has(k) && typeof v === 'string') headers[k] = v;
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bare-'));
  const file = join(dir, 'answers.json');
  writeFileSync(
    file,
    JSON.stringify({
      rest: { headers, body: body.toString('base64') },
      grpc: { frame: grpcFrame(message).toString('base64') },
    }),
  );
  return { child: await startBare(file), dir };
}

async function runSides(
  env: PairEnv,
  p: PairCase,
  t: ReturnType<typeof pairTransports>,
  once: (side: string, transport: Transport, seconds: number, pid?: number) => Promise<RunResult>,
  bare: { child: Child & { h2Url: string } },
): Promise<PairResult> {
  const { scale, log } = env;
  // The ceiling: the same generator against bare servers with the same bytes (no auth:
  // they read no header).
  const bareH2 = grpcTransport(bare.child.h2Url, rpcPath(p.method), p.request, {});
  const bareHttp1 = http1Transport(
    `${bare.child.url}${new URL(p.restUrl).pathname}${new URL(p.restUrl).search}`,
    {},
  );
  const sides = [
    { side: 'REST', transport: t.rest, runs: [] as RunResult[] },
    { side: 'gRPC', transport: t.grpc, runs: [] as RunResult[] },
    { side: 'gRPC, one session', transport: t.grpcShared, runs: [] as RunResult[] },
    { side: 'bare node:http2', transport: bareH2, runs: [] as RunResult[], pid: bare.child.pid },
    { side: 'bare node:http', transport: bareHttp1, runs: [] as RunResult[], pid: bare.child.pid },
  ] as const;
  const pidOf = (x: (typeof sides)[number]) => ('pid' in x ? x.pid : undefined);
  for (const x of sides) await once(x.side, x.transport, scale.warmupSeconds, pidOf(x));
  for (let r = 1; r <= scale.runs; r++) {
    // The order turns every run, so that each side sees the same drift in the machine's load.
    for (let i = 0; i < sides.length; i++) {
      const x = sides[(i + r - 1) % sides.length]!;
      x.runs.push(await once(x.side, x.transport, scale.runSeconds, pidOf(x)));
    }
    log(`  run ${r}: ${sides.map((x) => `${x.side} ${fmtRun(x.runs[r - 1])}`).join(' | ')}`);
  }
  const [rest, grpc, shared, h2, h1] = sides.map((x) => x.runs) as [
    RunResult[],
    RunResult[],
    RunResult[],
    RunResult[],
    RunResult[],
  ];
  const a = summarise(rest);
  const b = summarise(grpc);
  const c = summarise(shared);
  return {
    bareH2: { summary: summarise(h2), runs: h2 },
    bareHttp1: { summary: summarise(h1), runs: h1 },
    name: p.name,
    label: p.label,
    rest: p.rest,
    restSameGenerator: { summary: a, runs: rest },
    grpc: { summary: b, runs: grpc },
    grpcShared: { summary: c, runs: shared },
    ratioShared: { rps: c.rps / a.rps, p50: c.p50 / a.p50, p99: c.p99 / a.p99 },
    ratio: { rps: b.rps / a.rps, p50: b.p50 / a.p50, p99: b.p99 / a.p99 },
  };
}
