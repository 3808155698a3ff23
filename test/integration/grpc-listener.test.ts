import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { grpcCaller, startGrpcServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN } from '../helpers/server.js';

/** A self-signed certificate for 127.0.0.1, made with openssl; undefined without it. */
function selfSigned(): { key: Buffer; cert: Buffer } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const pair = selfSigned();
const maybe = pair ? test : test.skip;
if (!pair) console.log('SKIPPED TLS listener test: no openssl');

maybe('tls: ALPN gives gRPC HTTP/2 and REST HTTP/1.1 on one port', async (t) => {
  const s = await startGrpcServer({}, { tls: pair! });
  try {
    const caller = grpcCaller(s.address, ADMIN_TOKEN, grpc.credentials.createSsl(pair!.cert));
    const listed = await caller.call(GroupsService, 'ListGroups', {});
    caller.close();
    t.true(listed.ok, JSON.stringify(listed));
    const rest = await new Promise<{ status: number; alpn: string | false }>((resolve, reject) => {
      const req = https.get(`${s.url}/healthz`, { ca: pair!.cert }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, alpn: (res.socket as any).alpnProtocol });
      });
      req.on('error', reject);
    });
    // A client that offers no ALPN gets HTTP/1.1, as any HTTPS client would.
    t.is(rest.status, 200);
    t.not(rest.alpn, 'h2');
  } finally {
    await s.close();
  }
});

test('close: an HTTP/2 client does not hold the listener open', async (t) => {
  const s = await startGrpcServer();
  const caller = grpcCaller(s.address, ADMIN_TOKEN);
  t.true((await caller.call(GroupsService, 'ListGroups', {})).ok);
  // The session is still open; close() must GOAWAY it rather than wait for the client.
  // Generous: under load only a hang (a session nobody closes) should miss it.
  const closed = await Promise.race([
    new Promise<boolean>((resolve) => s.listener.close(() => resolve(true))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 30_000).unref()),
  ]);
  caller.close();
  await s.close().catch(() => undefined);
  t.true(closed);
});
