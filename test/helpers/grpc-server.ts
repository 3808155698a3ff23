import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createRegistry,
  fromBinary,
  toBinary,
  toJson,
  type DescMethod,
  type DescService,
  fromJson,
  type JsonValue,
} from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { answerClientErrors } from '../../src/api/client-errors.js';
import { compose } from '../../src/compose.js';
import { loadConfig } from '../../src/config.js';
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
  QuotaFailureSchema,
  ResourceInfoSchema,
  RetryInfoSchema,
} from '../../src/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../../src/gen/google/rpc/status_pb.js';
import type { FastPathStats } from '../../src/grpc/unary-fast-path.js';
import {
  ArborListener,
  createArborHandler,
  type ListenerOptions,
} from '../../src/grpc/listener.js';
import { freshDatabase, type TestDatabase } from './db.js';
import { ADMIN_TOKEN, restClients, type TestServer } from './server.js';

/** A TestServer on the combined listener (REST and gRPC on one port), with gRPC clients. */
export interface GrpcTestServer extends TestServer {
  /** `127.0.0.1:<port>`, the same port as `url`. */
  address: string;
  listener: ArborListener;
  /** How many calls the gRPC door's unary fast path answered (the rest, Connect). */
  fastPath: FastPathStats;
  /** A @grpc/grpc-js caller holding `token` in its `authorization` metadata. */
  grpc(token?: string): GrpcCaller;
  /** A grpc caller holding the admin token. */
  grpcAdmin: GrpcCaller;
}

/** What a gRPC call answered: the message as proto3 JSON, or the status as REST renders it. */
export type GrpcReply =
  { ok: true; json: any; code: 0 } | { ok: false; code: number; status: any; message: string };

export interface GrpcCaller {
  /** Call `Service/Method` (e.g. `GetGroup`) with a request given as its proto3 JSON. */
  call(service: DescService, method: string, req?: Record<string, unknown>): Promise<GrpcReply>;
  close(): void;
}

const registry = createRegistry(
  ErrorInfoSchema,
  BadRequestSchema,
  PreconditionFailureSchema,
  ResourceInfoSchema,
  RetryInfoSchema,
  QuotaFailureSchema,
);

/**
 * A real @grpc/grpc-js client: messages are (de)serialized with the generated descriptors,
 * and a failure's `grpc-status-details-bin` is decoded into the google.rpc.Status JSON the
 * REST door sends as a body, so both can be compared as they are.
 */
export function grpcCaller(
  address: string,
  token?: string,
  creds?: grpc.ChannelCredentials,
): GrpcCaller {
  const client = new grpc.Client(address, creds ?? grpc.credentials.createInsecure());
  return {
    call(service, name, req = {}) {
      const m: DescMethod | undefined = service.methods.find((x) => x.name === name);
      if (!m) throw new Error(`${service.typeName} has no ${name}`);
      const md = new grpc.Metadata();
      if (token !== undefined) md.set('authorization', `Bearer ${token}`);
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          `/${service.typeName}/${m.name}`,
          (msg: any) => Buffer.from(toBinary(m.input, msg)),
          (buf: Buffer) => fromBinary(m.output, buf),
          fromJson(m.input, req as JsonValue),
          md,
          (err, res) => {
            if (err) {
              const bin = err.metadata?.get('grpc-status-details-bin')[0];
              const status =
                bin instanceof Buffer
                  ? toJson(StatusSchema, fromBinary(StatusSchema, bin), { registry })
                  : undefined;
              resolve({ ok: false, code: err.code, status, message: err.details });
            } else {
              resolve({ ok: true, code: 0, json: toJson(m.output, res!, { registry }) });
            }
          },
        );
      });
    },
    close: () => client.close(),
  };
}

/** Like startServer, but on the listener `serve` uses: REST and gRPC on one port. */
export async function startGrpcServer(
  env: Record<string, string> = {},
  opts: ListenerOptions = {},
  database?: TestDatabase,
): Promise<GrpcTestServer> {
  const db: TestDatabase = database ?? (await freshDatabase());
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-test-'));
  const config = loadConfig({ ARBOR_ADMIN_TOKEN: ADMIN_TOKEN, DATA_DIR: dataDir, ...env });
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  const arbor = await compose(config, { database: db, logger });
  // As `serve` builds it once migrated, without the lifecycle in front.
  const handler = createArborHandler(arbor);
  const listener = new ArborListener(handler, {
    streams: handler.tryStream,
    limits: config.http,
    ...opts,
  }).listen(0, '127.0.0.1');
  // As `serve` does: a request Node's parser refuses is a typed 4xx.
  answerClientErrors(listener.http1);
  await new Promise<void>((r) => listener.once('listening', () => r()));
  const port = (listener.address() as AddressInfo).port;
  const address = `127.0.0.1:${port}`;
  const url = `${opts.tls ? 'https' : 'http'}://${address}`;
  const callers: GrpcCaller[] = [];
  const grpcFor = (token?: string) => {
    const c = grpcCaller(address, token);
    callers.push(c);
    return c;
  };
  return {
    url,
    address,
    listener,
    fastPath: handler.fastPath,
    arbor,
    db,
    ...restClients(url),
    grpc: grpcFor,
    grpcAdmin: grpcFor(ADMIN_TOKEN),
    close: async () => {
      for (const c of callers) c.close();
      listener.closeAllConnections();
      await new Promise<void>((r) => listener.close(() => r()));
      await arbor.close();
      await db.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
