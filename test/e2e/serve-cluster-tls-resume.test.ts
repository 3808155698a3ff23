import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import test from 'ava';
import { freshDatabase } from '../helpers/db.js';
import { needTool, postgresOnly } from '../helpers/need-tool.js';
import { freePort, startArbor, type ArborProcess } from '../helpers/process.js';
import { OPENSSL_MISSING, selfSigned } from '../helpers/self-signed.js';

/**
 * `arbor serve --workers 3` with TLS, as a real process, and a real node:tls client: a
 * session the client got from one worker resumes on the others (the primary shares the
 * ticket keys), and still does after a worker is killed and replaced. Which worker served
 * each connection is read from its access log line (by the request id the client sent).
 */
const TOKEN = 'e2e-tls-resume-admin-token-0123456789';
const pair = selfSigned();
const maybe = needTool(postgresOnly(test.serial), 'openssl', pair ? undefined : OPENSSL_MISSING);
const anyDb = needTool(test.serial, 'openssl', pair ? undefined : OPENSSL_MISSING);

interface Visit {
  reused: boolean;
  session: Buffer | undefined;
  status: string;
  /** The cluster worker that answered (its id), from the access log. */
  worker: number;
}

let sent = 0;

/** One HTTPS/1.1 request on a new TLS connection, offering `session` when given. */
async function visit(a: ArborProcess, session?: Buffer): Promise<Visit> {
  const id = `tls-resume-${process.pid}-${++sent}`;
  const got = await new Promise<Omit<Visit, 'worker'>>((resolve, reject) => {
    let last: Buffer | undefined;
    let body = '';
    const c = tls.connect({
      host: '127.0.0.1',
      port: a.port,
      servername: 'localhost',
      ca: pair!.cert,
      ALPNProtocols: ['http/1.1'],
      ...(session ? { session } : {}),
    });
    c.on('session', (s: Buffer) => (last = s));
    c.once('secureConnect', () =>
      c.write(
        `GET /iam/v2beta1/groups HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${TOKEN}\r\nx-request-id: ${id}\r\nconnection: close\r\n\r\n`,
      ),
    );
    c.on('data', (d: Buffer) => (body += d.toString()));
    c.on('end', () =>
      resolve({ reused: c.isSessionReused(), session: last, status: body.slice(9, 12) }),
    );
    c.on('error', reject);
  });
  const line = await until(
    () => a.lines().find((l) => l.requestId === id && l.msg === 'request'),
    `the access line of ${id}`,
  );
  return { ...got, worker: Number(line.worker) };
}

/** Poll until `get()` answers; generous, because workers start slowly on a loaded machine. */
async function until<T>(get: () => T | undefined | false, what: string, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = get();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const serving = (a: ArborProcess) =>
  a.lines().filter((l) => l.msg === 'worker serving') as Array<{ worker: number; pid: number }>;

maybe(
  'serve --workers 3 with TLS: a session resumes on every worker, and after one is replaced',
  async (t) => {
    const db = await freshDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'arbor-tls-resume-'));
    writeFileSync(join(dir, 'tls.crt'), pair!.cert);
    writeFileSync(join(dir, 'tls.key'), pair!.key);
    const a = startArbor(['serve'], {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, 'data'),
      DATABASE_URL: db.url!,
      ARBOR_WORKERS: '3',
      ARBOR_ADMIN_TOKEN: TOKEN,
      ARBOR_ISSUER_URL: '',
      ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
      ARBOR_TLS_CERT_FILE: join(dir, 'tls.crt'),
      ARBOR_TLS_KEY_FILE: join(dir, 'tls.key'),
    });
    try {
      await until(() => serving(a).length >= 3, 'three workers serving');
      const first = await visit(a);
      t.is(first.status, '200');
      t.false(first.reused);
      t.truthy(first.session);

      // The primary hands connections to the workers in turn: enough of them reach every
      // worker, the one that sealed the ticket and the others, and every one resumes.
      const resumed = async (what: string) => {
        const workers = new Set<number>();
        for (let i = 0; i < 9; i++) {
          const v = await visit(a, first.session);
          t.is(v.status, '200');
          t.true(v.reused, `${what}: connection ${i} (worker ${v.worker}) resumed`);
          workers.add(v.worker);
        }
        return workers;
      };
      const before = await resumed('before');
      t.true(
        before.size >= 2,
        `resumed on ${before.size} workers, not only the one that sealed it`,
      );
      t.true(
        [...before].some((w) => w !== first.worker),
        'on a worker other than the sealer',
      );

      // The worker that sealed the ticket is killed; its replacement and the others open it.
      const victim = serving(a).find((w) => w.worker === first.worker)!;
      process.kill(victim.pid, 'SIGKILL');
      await until(() => serving(a).length >= 4, 'a replacement worker serving');
      const replacement = serving(a)[3]!.worker;
      const after = await resumed('after the restart');
      t.false(after.has(first.worker), 'the killed worker answers no more');
      t.true(after.has(replacement), 'the replacement resumed the old ticket');

      // Nothing of the keys reaches the logs.
      t.false(/ticket[^"]*"\s*:\s*"[0-9a-f]{32,}/i.test(a.logs()));
      t.is(await a.stop('SIGTERM'), 0);
    } finally {
      a.kill();
      rmSync(dir, { recursive: true, force: true });
      await db.close();
    }
  },
);

/** One process on PGlite with TLS and `env`, in a fresh directory holding its files. */
function startOne(dir: string, name: string, env: Record<string, string>, port: number) {
  return startArbor(['serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: join(dir, name),
    DATABASE_URL: '',
    ARBOR_WORKERS: '1',
    ARBOR_ADMIN_TOKEN: TOKEN,
    ARBOR_ISSUER_URL: '',
    ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
    ARBOR_TLS_CERT_FILE: join(dir, 'tls.crt'),
    ARBOR_TLS_KEY_FILE: join(dir, 'tls.key'),
    ...env,
  });
}

anyDb(
  'serve with ARBOR_TLS_TICKET_KEY_FILE: two replicas resume each other; a readable key file stops the start',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-tls-tickets-'));
    writeFileSync(join(dir, 'tls.crt'), pair!.cert);
    writeFileSync(join(dir, 'tls.key'), pair!.key);
    const secret = randomBytes(48).toString('base64');
    const keyFile = join(dir, 'ticket.key');
    writeFileSync(keyFile, secret, { mode: 0o600 });
    const env = { ARBOR_TLS_TICKET_KEY_FILE: keyFile };
    const a = startOne(dir, 'a', env, await freePort());
    const b = startOne(dir, 'b', env, await freePort());
    try {
      await a.waitForLog(/serving at/, 120_000);
      await b.waitForLog(/serving at/, 120_000);
      const first = await visit(a);
      t.is(first.status, '200');
      t.false(first.reused);
      const there = await visit(b, first.session);
      t.true(there.reused, 'the other replica opened the ticket');
      t.is(there.status, '200');
      t.false(a.logs().includes(secret) || b.logs().includes(secret), 'the secret is not logged');
    } finally {
      a.kill();
      b.kill();
    }
    try {
      chmodSync(keyFile, 0o644);
      const bad = startOne(dir, 'c', env, await freePort());
      t.not(await bad.exited, 0);
      t.regex(bad.logs(), /ARBOR_TLS_TICKET_KEY_FILE must not be readable by others/);
      t.false(bad.logs().includes(secret));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
