import https from 'node:https';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import type { NodeHandlerFn } from '../../src/grpc/grpc-handler.js';
import { ArborListener } from '../../src/grpc/listener.js';
import { grpcCaller, startGrpcServer } from '../helpers/grpc-server.js';
import { OPENSSL_MISSING, selfSigned } from '../helpers/self-signed.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { needTool } from '../helpers/need-tool.js';

const pair = selfSigned();
const maybe = needTool(test, 'openssl', pair ? undefined : OPENSSL_MISSING);

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

/** The SHA-256 fingerprint of the certificate a new TLS connection is served. */
function servedFingerprint(address: string, ca: Buffer): Promise<string> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host, port: Number(port), ca, servername: 'localhost' }, () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.end();
    });
    s.on('error', reject);
  });
}

maybe('tls: setSecureContext serves a new certificate from the next handshake on', async (t) => {
  const next = selfSigned('rotated')!;
  const s = await startGrpcServer({}, { tls: pair! });
  try {
    const before = await servedFingerprint(s.address, pair!.cert);
    s.listener.setSecureContext(next);
    const after = await servedFingerprint(s.address, next.cert);
    t.not(after, before);
    // ALPN belongs to the server, not the context: gRPC still gets HTTP/2 after the swap.
    const caller = grpcCaller(s.address, ADMIN_TOKEN, grpc.credentials.createSsl(next.cert));
    const listed = await caller.call(GroupsService, 'ListGroups', {});
    caller.close();
    t.true(listed.ok, JSON.stringify(listed));
    // The old certificate is no longer what a client is shown.
    await t.throwsAsync(servedFingerprint(s.address, pair!.cert));
  } finally {
    await s.close();
  }
});

test('tls: a cleartext listener has no certificate to swap', (t) => {
  const listener = new ArborListener((() => undefined) as unknown as NodeHandlerFn);
  t.throws(() => listener.setSecureContext({ key: 'k', cert: 'c' }), {
    message: /serves cleartext/,
  });
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
