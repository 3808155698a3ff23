import { create, toBinary, type DescMethod } from '@bufbuild/protobuf';
import {
  GetGroupRequestSchema,
  GroupsService,
  ListGroupsRequestSchema,
} from '../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { fmtRun } from './cases.js';
import { closedLoop, type Transport } from './closed-loop.js';
import { summarise, type RunResult } from './load.js';
import type { Child } from './procs.js';
import type { PairResult } from './report.js';
import { PAGE_SIZE, type Scale } from './scale.js';
import { grpcTransport, http1Transport } from './transports.js';

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
  const { scale, db, arbor, log } = env;
  const t = pairTransports(arbor.url, p, env.token);
  const once = async (side: string, transport: Transport, seconds: number) => {
    const { result, firstFailure } = await closedLoop(transport, seconds, arbor.pid, db.name);
    if (result.errors + result.non2xx > 0)
      throw new Error(
        `${p.name}: ${side} had ${result.non2xx} failed answers and ${result.errors} broken ` +
          `connections (first: ${firstFailure})`,
      );
    return result;
  };
  log(`case ${p.name}: ${p.label} (gRPC next to REST, same generator)`);
  const sides = [
    { side: 'REST', transport: t.rest, runs: [] as RunResult[] },
    { side: 'gRPC', transport: t.grpc, runs: [] as RunResult[] },
    { side: 'gRPC, one session', transport: t.grpcShared, runs: [] as RunResult[] },
  ] as const;
  for (const x of sides) await once(x.side, x.transport, scale.warmupSeconds);
  for (let r = 1; r <= scale.runs; r++) {
    // The order turns every run, so that each side sees the same drift in the machine's load.
    for (let i = 0; i < sides.length; i++) {
      const x = sides[(i + r - 1) % sides.length]!;
      x.runs.push(await once(x.side, x.transport, scale.runSeconds));
    }
    log(`  run ${r}: ${sides.map((x) => `${x.side} ${fmtRun(x.runs[r - 1])}`).join(' | ')}`);
  }
  const [rest, grpc, shared] = sides.map((x) => x.runs) as [RunResult[], RunResult[], RunResult[]];
  const a = summarise(rest);
  const b = summarise(grpc);
  const c = summarise(shared);
  return {
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
