import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { freePort, startArbor } from '../helpers/process.js';
import { freshDatabase, TEST_BACKEND, type TestDatabase } from '../helpers/db.js';
import { grpcCaller } from '../helpers/grpc-server.js';
import { OPENSSL_MISSING, selfSigned, type SelfSigned } from '../helpers/self-signed.js';
import { needTool, postgresOnly } from '../helpers/need-tool.js';

/**
 * `arbor serve` as a real process with ARBOR_TLS_CERT_FILE/KEY_FILE: REST over https and
 * gRPC over TLS on one port, nothing in cleartext there, and certificates rotated in place.
 */
const TOKEN = 'e2e-tls-admin-token-0123456789';
const pair = selfSigned();
const maybe = needTool(test.serial, 'openssl', pair ? undefined : OPENSSL_MISSING);

interface Served {
  child: ChildProcess;
  port: number;
  address: string;
  files: { cert: string; key: string };
  logs(): string;
  lines(): Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  cleanup(): void;
}

async function startServe(env: Record<string, string>, p: SelfSigned): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-e2e-tls-'));
  const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
  writeFileSync(files.cert, p.cert);
  writeFileSync(files.key, p.key);
  const port = await freePort();
  const arbor = startArbor(['serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: join(dir, 'data'),
    DATABASE_URL: '',
    ARBOR_ADMIN_TOKEN: TOKEN,
    ARBOR_ISSUER_URL: '',
    ARBOR_WORKERS: '1',
    ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
    ARBOR_TLS_CERT_FILE: files.cert,
    ARBOR_TLS_KEY_FILE: files.key,
    ...env,
  });
  return {
    child: arbor.child,
    port,
    address: `127.0.0.1:${port}`,
    files,
    logs: arbor.logs,
    lines: arbor.lines,
    exited: arbor.exited,
    cleanup: () => {
      arbor.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Answer {
  status: number;
  json: any;
  alpn: string | false | null;
}

/** One https request on a fresh connection, verifying the server against `ca`. */
function httpsRequest(
  port: number,
  ca: Buffer,
  path: string,
  opts: { method?: string; body?: unknown } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        ca,
        servername: 'localhost',
        agent: false,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            json: body ? JSON.parse(body) : undefined,
            alpn: (res.socket as tls.TLSSocket).alpnProtocol,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body === undefined ? undefined : JSON.stringify(opts.body));
  });
}

/** The fingerprint of the certificate a new connection is shown (no verification). */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const opts = { host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false };
    const s = tls.connect(opts, () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.end();
    });
    s.on('error', reject);
  });
}

const fingerprintOf = (cert: Buffer) => new X509Certificate(cert).fingerprint256;

async function until(ok: () => Promise<boolean> | boolean, what: string, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await Promise.resolve(ok()).catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function ready(s: Served, ca: Buffer): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (s.child.exitCode !== null) throw new Error(`arbor exited:\n${s.logs()}`);
    const status = await httpsRequest(s.port, ca, '/readyz').then(
      (a) => a.status,
      () => 0, // not listening yet
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`not ready over https:\n${s.logs()}`);
}

/** A plain HTTP/1.1 request: settles with the status, or rejects when nothing answers. */
function cleartextGet(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer')));
    req.on('error', reject);
  });
}

/** ListGroups by @grpc/grpc-js over TLS on a new connection (no shared subchannel): its code. */
function listOnOwnConnection(address: string, ca: Buffer): Promise<number> {
  const client = new grpc.Client(address, grpc.credentials.createSsl(ca), {
    'grpc.use_local_subchannel_pool': 1,
  });
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${TOKEN}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/arbor.iam.v2beta1.GroupsService/ListGroups',
      () => Buffer.alloc(0), // an empty ListGroupsRequest
      (b: Buffer) => b,
      {},
      md,
      (err) => {
        client.close();
        resolve(err ? err.code : 0);
      },
    );
  });
}

/** The database of one serve: PGlite in its data dir, or a fresh PostgreSQL database. */
async function database(): Promise<{ env: Record<string, string>; db?: TestDatabase }> {
  if (TEST_BACKEND !== 'postgres') return { env: {} };
  const db = await freshDatabase();
  return { env: { DATABASE_URL: db.url! }, db };
}

maybe(
  'serve with TLS: https REST and gRPC over TLS on one port, no cleartext, certificates reloaded',
  async (t) => {
    const { env, db } = await database();
    const s = await startServe(env, pair!);
    try {
      await ready(s, pair!.cert);
      const health = await httpsRequest(s.port, pair!.cert, '/healthz');
      t.is(health.status, 200);
      t.is(health.alpn, false, 'a client offering no ALPN is served HTTP/1.1');

      // The default issuer follows the scheme: tokens name https://localhost:<port>.
      const discovery = await httpsRequest(s.port, pair!.cert, '/.well-known/openid-configuration');
      t.is(discovery.json.issuer, `https://localhost:${s.port}`);

      // An authenticated write and Get over https ...
      const created = await httpsRequest(s.port, pair!.cert, '/iam/v2beta1/groups', {
        method: 'POST',
        body: { name: 'tls-org' },
      });
      t.is(created.status, 200, JSON.stringify(created.json));
      const uid = created.json.uid as string;
      const got = await httpsRequest(s.port, pair!.cert, `/iam/v2beta1/groups/${uid}`);
      t.is(got.status, 200);
      t.is(got.json.name, 'tls-org');

      // ... and the same Group through gRPC over TLS (ALPN h2) on the same port.
      const secure = grpcCaller(s.address, TOKEN, grpc.credentials.createSsl(pair!.cert));
      const viaGrpc = await secure.call(GroupsService, 'GetGroup', { uid });
      secure.close();
      t.true(viaGrpc.ok, JSON.stringify(viaGrpc));
      if (viaGrpc.ok) t.deepEqual([viaGrpc.json.uid, viaGrpc.json.name], [uid, 'tls-org']);

      // Cleartext is not served on a TLS port: neither HTTP/1.1 nor h2c.
      await t.throwsAsync(cleartextGet(s.port));
      const plain = grpcCaller(s.address, TOKEN);
      const viaH2c = await plain.call(GroupsService, 'GetGroup', { uid });
      plain.close();
      t.false(viaH2c.ok);
      t.is(viaH2c.code, grpc.status.UNAVAILABLE);

      // Rotation in place, announced by SIGHUP: new connections get the new certificate.
      const second = selfSigned('second')!;
      writeFileSync(s.files.cert, second.cert);
      writeFileSync(s.files.key, second.key);
      s.child.kill('SIGHUP');
      await until(
        async () => (await servedFingerprint(s.port)) === fingerprintOf(second.cert),
        'the certificate reloaded on SIGHUP',
        30_000,
      );
      t.is(s.child.exitCode, null, 'SIGHUP does not stop a TLS server');
      const rotated = grpcCaller(s.address, TOKEN, grpc.credentials.createSsl(second.cert));
      t.true((await rotated.call(GroupsService, 'GetGroup', { uid })).ok);
      rotated.close();
      t.is((await httpsRequest(s.port, second.cert, '/healthz')).status, 200);

      // Rotation with no signal at all (cert-manager): noticed by the file poll.
      const third = selfSigned('third')!;
      writeFileSync(s.files.cert, third.cert);
      writeFileSync(s.files.key, third.key);
      await until(
        async () => (await servedFingerprint(s.port)) === fingerprintOf(third.cert),
        'the certificate reloaded after the files changed',
        60_000,
      );
      t.true(
        s.lines().some((l) => l.msg === 'TLS certificate reloaded' && l.reason === 'files changed'),
      );

      s.child.kill('SIGTERM');
      t.is(await s.exited, 0);
    } finally {
      s.cleanup();
      await db?.close();
    }
  },
);

maybe(
  'serve with TLS: an unusable certificate file stops the start, naming the variable',
  async (t) => {
    const s = await startServe({ ARBOR_TLS_CERT_FILE: '/nonexistent/arbor/tls.crt' }, pair!);
    try {
      t.is(await s.exited, 1);
      t.regex(
        s.logs(),
        /arbor: configuration: ARBOR_TLS_CERT_FILE cannot be read: \/nonexistent\/arbor\/tls\.crt \(ENOENT\)/,
      );
    } finally {
      s.cleanup();
    }
    // The key of another certificate: refused, and nothing of the key is printed.
    const other = selfSigned('other')!;
    const m = await startServe({}, { cert: pair!.cert, key: other.key });
    try {
      t.is(await m.exited, 1);
      t.regex(
        m.logs(),
        /ARBOR_TLS_KEY_FILE must be the key of the certificate in ARBOR_TLS_CERT_FILE/,
      );
      t.false(m.logs().includes(other.key.toString().split('\n')[1]!));
    } finally {
      m.cleanup();
    }
  },
);

postgresOnly(maybe)(
  'serve --workers 2 with TLS: both workers serve https and gRPC, SIGHUP reloads each',
  async (t) => {
    const { env, db } = await database();
    const s = await startServe({ ...env, ARBOR_WORKERS: '2' }, pair!);
    const serving = () => s.lines().filter((l) => l.msg === 'worker serving');
    try {
      await until(() => serving().length >= 2, 'two workers serving');
      // Fresh connections go to the workers in turn: https from both ...
      for (let i = 0; i < 6; i++)
        t.is((await httpsRequest(s.port, pair!.cert, '/iam/v2beta1/groups')).status, 200);
      const byWorker = (msg: string, what: string, value: string) =>
        new Set(
          s
            .lines()
            .filter((l) => l.msg === msg && l[what] === value)
            .map((l) => l.worker),
        );
      t.is(byWorker('request', 'path', '/iam/v2beta1/groups').size, 2, 'https from both');
      // ... and gRPC over TLS from both, each call on a connection of its own.
      for (let i = 0; i < 6; i++) t.is(await listOnOwnConnection(s.address, pair!.cert), 0);
      t.is(byWorker('rpc', 'rpc', 'arbor.iam.v2beta1.GroupsService/ListGroups').size, 2);

      // SIGHUP to the primary reaches every worker.
      const next = selfSigned('workers')!;
      writeFileSync(s.files.cert, next.cert);
      writeFileSync(s.files.key, next.key);
      s.child.kill('SIGHUP');
      const reloaded = () =>
        new Set(
          s
            .lines()
            .filter((l) => l.msg === 'TLS certificate reloaded' && l.reason === 'SIGHUP')
            .map((l) => l.worker),
        );
      await until(() => reloaded().size === 2, 'both workers reloaded', 30_000);
      for (let i = 0; i < 4; i++) t.is(await servedFingerprint(s.port), fingerprintOf(next.cert));
      t.is(serving().length, 2, 'no worker died of the signal');

      s.child.kill('SIGTERM');
      t.is(await s.exited, 0);
    } finally {
      s.cleanup();
      await db?.close();
    }
  },
);
