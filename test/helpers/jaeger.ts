import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from './process.js';

/**
 * Jaeger all-in-one as a real trace receiver: OTLP over HTTP in, spans kept in memory, read
 * back through its query API. The binary comes from scripts/jaeger/build.sh (.ci/tools.sh).
 */
const VERSION = 'v1.76.0';

export const JAEGER_BINARY =
  process.env.ARBOR_JAEGER ??
  join(
    process.env.ARBOR_CACHE ?? join(homedir(), '.cache', 'arbor'),
    `jaeger-${VERSION}`,
    'jaeger-all-in-one',
  );

/** Why Jaeger cannot run here, or undefined (for needTool). */
export function jaegerMissing(): string | undefined {
  return existsSync(JAEGER_BINARY)
    ? undefined
    : `no ${JAEGER_BINARY} (run scripts/jaeger/build.sh)`;
}

/** A span as Jaeger's query API returns it (only what the tests read). */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; traceID: string; spanID: string }>;
  tags: Array<{ key: string; value: unknown }>;
  logs: Array<{ timestamp: number; fields: Array<{ key: string; value: unknown }> }>;
}

export interface Jaeger {
  /** The OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlp: string;
  /** The spans of one trace so far (none while Jaeger has not heard of it). */
  spans(traceId: string): Promise<JaegerSpan[]>;
  logs(): string;
  stop(): Promise<void>;
}

/** Starts Jaeger on free loopback ports, resolved once its query API answers. */
export async function startJaeger(): Promise<Jaeger> {
  const [otlpHttp, otlpGrpc, query, queryGrpc, admin, collHttp, collGrpc] = await Promise.all(
    Array.from({ length: 7 }, () => freePort()),
  );
  const at = (p: number) => `127.0.0.1:${p}`;
  const child = spawn(
    JAEGER_BINARY,
    [
      `--collector.otlp.http.host-port=${at(otlpHttp!)}`,
      `--collector.otlp.grpc.host-port=${at(otlpGrpc!)}`,
      `--collector.http-server.host-port=${at(collHttp!)}`,
      `--collector.grpc-server.host-port=${at(collGrpc!)}`,
      `--query.http-server.host-port=${at(query!)}`,
      `--query.grpc-server.host-port=${at(queryGrpc!)}`,
      `--admin.http.host-port=${at(admin!)}`,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // In memory, and not tracing itself (it would export to :4317, which nobody serves).
      env: {
        ...process.env,
        SPAN_STORAGE_TYPE: 'memory',
        OTEL_SDK_DISABLED: 'true',
        OTEL_TRACES_EXPORTER: 'none',
      },
    },
  );
  let logs = '';
  child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const base = `http://${at(query!)}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await fetch(`${base}/api/services`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`jaeger did not start\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    otlp: `http://${at(otlpHttp!)}`,
    logs: () => logs.slice(-4000),
    spans: async (traceId) => {
      const r = await fetch(`${base}/api/traces/${traceId}`);
      if (r.status === 404) return [];
      if (!r.ok) throw new Error(`jaeger answered ${r.status} for trace ${traceId}`);
      const body = (await r.json()) as { data?: Array<{ spans: JaegerSpan[] }> };
      return body.data?.flatMap((t) => t.spans) ?? [];
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A fresh W3C `traceparent` (sampled), with its trace and span ids. */
export function newTraceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** The trace and parent span ids of a `traceparent` header, or undefined. */
export function parseTraceparent(
  v: string | string[] | undefined,
): { traceId: string; spanId: string } | undefined {
  const m = typeof v === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(v) : null;
  return m ? { traceId: m[1]!, spanId: m[2]! } : undefined;
}

/** A span's tag value, or undefined. */
export function tag(s: JaegerSpan, key: string): unknown {
  return s.tags.find((t) => t.key === key)?.value;
}

/** The span id of a span's parent (its CHILD_OF reference), or undefined for a root. */
export function parentOf(s: JaegerSpan): string | undefined {
  return s.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
}

/** The names of a span's events (Jaeger's logs, field `event`). */
export function eventsOf(s: JaegerSpan): string[] {
  return s.logs.flatMap((l) =>
    l.fields.filter((f) => f.key === 'event').map((f) => String(f.value)),
  );
}
