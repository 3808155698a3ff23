import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ArborListener } from '../../src/grpc/listener.js';
import type { NodeHandlerFn } from '../../src/grpc/grpc-handler.js';
import {
  DerivedTicketKeys,
  GeneratedTicketKeys,
  TicketKeyRing,
  fromTicketKeyMessage,
  readTicketSecret,
  rotateTicketKeys,
  ticketKeyMessage,
  type TicketKeySet,
} from '../../src/tls-ticket-keys.js';
import { needTool } from '../helpers/need-tool.js';
import { OPENSSL_MISSING, selfSigned } from '../helpers/self-signed.js';

/**
 * TLS session tickets through the real API listener and a real node:tls client: what one
 * server (worker) seals another opens when they share the keys, a rotation keeps the old key
 * for one more period and not longer, and a ticket that is not ours is a full handshake.
 * The clock is the keys' (an injected `now`), never the wall: nothing here waits on time.
 */
const pair = selfSigned();
const maybe = needTool(test, 'openssl', pair ? undefined : OPENSSL_MISSING);
const HOUR = 3_600_000;
const T0 = 1_800_000_000_000;
const VERSIONS = ['TLSv1.3', 'TLSv1.2'] as const;

const hello: NodeHandlerFn = ((_req: unknown, res: { end(b: string): void }) =>
  res.end('ok')) as unknown as NodeHandlerFn;

/** An API listener with TLS and `ring`'s tickets on a loopback port, closed after the test. */
async function serve(t: { teardown(fn: () => void): void }, ring: TicketKeyRing) {
  const l = new ArborListener(hello, {
    tls: pair!,
    tickets: { ring, lifetimeSeconds: 3600 },
  });
  await new Promise<void>((r) => l.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    l.closeAllConnections();
    l.close();
  });
  return { listener: l, port: (l.address() as AddressInfo).port };
}

interface Visit {
  reused: boolean;
  /** The last session the server gave (a ticket inside), for the next visit. */
  session: Buffer | undefined;
  body: string;
}

/** One HTTPS/1.1 request on a new TLS connection, offering `session` when given. */
function visit(
  port: number,
  session?: Buffer,
  maxVersion: tls.SecureVersion = 'TLSv1.3',
): Promise<Visit> {
  return new Promise((resolve, reject) => {
    let last: Buffer | undefined;
    let body = '';
    const c = tls.connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      ca: pair!.cert,
      ALPNProtocols: ['http/1.1'],
      maxVersion,
      ...(session ? { session } : {}),
    });
    c.on('session', (s: Buffer) => (last = s));
    c.once('secureConnect', () =>
      c.write('GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n'),
    );
    c.on('data', (d: Buffer) => (body += d.toString()));
    c.on('end', () => resolve({ reused: c.isSessionReused(), session: last, body }));
    c.on('error', reject);
  });
}

const ringOf = (set: TicketKeySet) => {
  const r = new TicketKeyRing();
  r.set(set);
  return r;
};

for (const version of VERSIONS) {
  maybe(
    `tickets ${version}: a second worker holding the shared keys resumes the first's session`,
    async (t) => {
      const keys = new GeneratedTicketKeys(HOUR).at(T0);
      const a = await serve(t, ringOf(keys));
      const b = await serve(t, ringOf(keys));
      const first = await visit(a.port, undefined, version);
      t.false(first.reused);
      t.truthy(first.session, 'the server sent a ticket');
      const second = await visit(b.port, first.session, version);
      t.true(second.reused, 'resumed on the other worker');
      t.true(second.body.endsWith('ok'));
    },
  );

  maybe(
    `tickets ${version}: a worker with keys of its own (Node's default) does a full handshake`,
    async (t) => {
      const a = await serve(t, ringOf(new GeneratedTicketKeys(HOUR).at(T0)));
      const b = await serve(t, ringOf(new GeneratedTicketKeys(HOUR).at(T0)));
      const first = await visit(a.port, undefined, version);
      t.true((await visit(a.port, first.session, version)).reused, 'resumes where it was sealed');
      const elsewhere = await visit(b.port, first.session, version);
      t.false(elsewhere.reused);
      t.true(elsewhere.body.endsWith('ok'), 'the full handshake serves');
    },
  );

  maybe(
    `tickets ${version}: after a rotation the old key opens for one period, then not`,
    async (t) => {
      const source = new GeneratedTicketKeys(HOUR);
      const ring = ringOf(source.at(T0));
      const s = await serve(t, ring);
      const sealed = (await visit(s.port, undefined, version)).session;

      ring.set(source.at(T0 + HOUR));
      const inGrace = await visit(s.port, sealed, version);
      t.true(inGrace.reused, 'the previous key still opens it');

      ring.set(source.at(T0 + 2 * HOUR));
      const past = await visit(s.port, sealed, version);
      t.false(past.reused, 'two periods on, its key is gone: a full handshake');
      t.true(past.body.endsWith('ok'));
      // TLS 1.3: the grace visit got a ticket sealed under the key then current, which
      // still resumes. (A TLS 1.2 client is told of no new session on a resumption.)
      if (version === 'TLSv1.3')
        t.true((await visit(s.port, inGrace.session, version)).reused, 'renewed under the new key');
      else t.is(inGrace.session, undefined);
    },
  );
}

maybe('tickets: a gap of two periods drops the previous key at once', (t) => {
  const source = new GeneratedTicketKeys(HOUR);
  const first = source.at(T0);
  t.is(source.at(T0 + HOUR - 1), first, 'within the period the keys stay');
  const next = source.at(T0 + HOUR);
  t.deepEqual(next.accepted, [first.current]);
  t.deepEqual(source.at(T0 + 3 * HOUR).accepted, [], 'a suspended machine keeps nothing old');
  t.is(source.at(T0), source.at(T0 + 3 * HOUR), 'a clock stepping back reissues nothing');
});

maybe('tickets: the rotation follows the injected clock, and the keys cross IPC intact', (t) => {
  let now = T0;
  const seen: TicketKeySet[] = [];
  const stop = rotateTicketKeys(
    new GeneratedTicketKeys(HOUR),
    (s) => seen.push(s),
    () => now,
  );
  t.teardown(stop);
  t.is(seen.length, 1, 'keys at once');
  t.is(seen[0]!.period, Math.floor(T0 / HOUR));
  now += HOUR;
  const back = fromTicketKeyMessage(JSON.parse(JSON.stringify(ticketKeyMessage(seen[0]!))));
  t.deepEqual(back, seen[0]);
  t.is(fromTicketKeyMessage('arbor:prepared'), undefined);
  t.throws(() =>
    fromTicketKeyMessage({ type: 'arbor:ticket-keys', period: 1, current: 'ab', accepted: [] }),
  );
});

/** What a client holding `session` would send, with the ticket in it changed by `change`. */
function tampered(session: Buffer, name: Buffer, change: (ticket: Buffer) => void): Buffer {
  const copy = Buffer.from(session);
  const at = copy.indexOf(name);
  if (at < 0) throw new Error('the ticket (its key name) is not in the session');
  change(copy.subarray(at));
  return copy;
}

for (const version of VERSIONS) {
  maybe(
    `tickets ${version} attack: forged, tampered and foreign tickets get a full handshake`,
    async (t) => {
      const keys = new GeneratedTicketKeys(HOUR).at(T0);
      const s = await serve(t, ringOf(keys));
      const sealed = (await visit(s.port, undefined, version)).session!;
      t.true((await visit(s.port, sealed, version)).reused, 'the genuine ticket resumes');

      const name = keys.current.name;
      const attempts: Record<string, Buffer> = {
        // A key name nobody holds.
        'unknown key name': tampered(sealed, name, (tk) => randomBytes(16).copy(tk)),
        // Our key's name over bytes changed (the IV): the HMAC no longer matches.
        'tampered body': tampered(sealed, name, (tk) => (tk[16]! ^= 0x01)),
        // All random where the ticket was.
        garbage: tampered(sealed, name, (tk) => randomBytes(64).copy(tk)),
      };
      // A ticket sealed by a server with other keys (another deployment, an old primary).
      const other = await serve(t, ringOf(new GeneratedTicketKeys(HOUR).at(T0)));
      attempts['foreign key'] = (await visit(other.port, undefined, version)).session!;

      for (const [what, session] of Object.entries(attempts)) {
        const v = await visit(s.port, session, version);
        t.false(v.reused, what);
        t.true(v.body.endsWith('ok'), `${what}: served after a full handshake`);
      }
    },
  );
}

maybe('tickets: a certificate reload keeps the shared keys', async (t) => {
  const keys = new GeneratedTicketKeys(HOUR).at(T0);
  const s = await serve(t, ringOf(keys));
  const sealed = (await visit(s.port)).session;
  s.listener.setSecureContext(pair!);
  t.true((await visit(s.port, sealed)).reused);
});

/** A key file in a fresh directory, mode `mode`, removed after the test. */
function keyFile(t: { teardown(fn: () => void): void }, bytes: Buffer | string, mode = 0o600) {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-ticket-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = join(dir, 'ticket.key');
  writeFileSync(f, bytes);
  chmodSync(f, mode);
  return f;
}

maybe(
  'tickets: replicas deriving from one key file resume each other; another secret does not',
  async (t) => {
    const secret = randomBytes(48);
    const a = await serve(t, ringOf(new DerivedTicketKeys(secret, HOUR).at(T0)));
    // Another replica, its clock one period ahead: the next key opens too, and so does the previous.
    const b = await serve(t, ringOf(new DerivedTicketKeys(secret, HOUR).at(T0 + HOUR)));
    const c = await serve(t, ringOf(new DerivedTicketKeys(randomBytes(48), HOUR).at(T0)));
    const sealedA = (await visit(a.port)).session;
    t.true((await visit(b.port, sealedA)).reused, 'a ticket of the period before');
    const sealedB = (await visit(b.port)).session;
    t.true((await visit(a.port, sealedB)).reused, 'a ticket of the period after');
    t.false((await visit(c.port, sealedA)).reused, 'another secret');
    const later = await serve(t, ringOf(new DerivedTicketKeys(secret, HOUR).at(T0 + 2 * HOUR)));
    t.false((await visit(later.port, sealedA)).reused, 'two periods on');
  },
);

test('tickets: the key file is read strictly and never echoed', (t) => {
  const secret = `${'s3cr3t-'.repeat(8)}\n`;
  t.deepEqual(readTicketSecret(keyFile(t, secret)), Buffer.from(secret));
  t.notThrows(() => readTicketSecret(keyFile(t, secret, 0o440)), 'group read (fsGroup) serves');
  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'world-readable',
      () => readTicketSecret(keyFile(t, secret, 0o644)),
      /not be readable by others.*644/,
    ],
    [
      'short',
      () => readTicketSecret(keyFile(t, 'short-secret')),
      /from 32 to 4096 bytes.*holds 12/,
    ],
    ['missing', () => readTicketSecret('/nonexistent/ticket.key'), /cannot be read.*ENOENT/],
    ['a directory', () => readTicketSecret(tmpdir()), /must be a file/],
  ];
  for (const [what, read, message] of cases) {
    const e = t.throws(read, { instanceOf: ConfigError }, what);
    t.regex(e!.message, /^ARBOR_TLS_TICKET_KEY_FILE /, what);
    t.regex(e!.message, message, what);
    t.false(e!.message.includes('s3cr3t'), `${what}: the secret is not repeated`);
  }
});

test('tickets: configuration is parsed strictly', (t) => {
  const tlsEnv = { ARBOR_TLS_CERT_FILE: 'c.pem', ARBOR_TLS_KEY_FILE: 'k.pem' };
  t.is(loadConfig({}).tlsTickets.rotationMs, HOUR, 'hourly unless set');
  t.is(loadConfig({}).tlsTickets.keyFile, undefined);
  const set = loadConfig({ ...tlsEnv, ARBOR_TLS_TICKET_ROTATION_SECONDS: '600' });
  t.is(set.tlsTickets.rotationMs, 600_000);
  for (const bad of ['0', '86401', '1h', '-5', '1.5'])
    t.throws(() => loadConfig({ ARBOR_TLS_TICKET_ROTATION_SECONDS: bad }), {
      instanceOf: ConfigError,
      message: /^ARBOR_TLS_TICKET_ROTATION_SECONDS /,
    });
  t.throws(() => loadConfig({ ARBOR_TLS_TICKET_KEY_FILE: '/etc/ticket.key' }), {
    instanceOf: ConfigError,
    message: 'ARBOR_TLS_TICKET_KEY_FILE is set only with ARBOR_TLS_CERT_FILE',
  });
  t.regex(
    loadConfig({ ...tlsEnv, ARBOR_TLS_TICKET_KEY_FILE: 'ticket.key' }).tlsTickets.keyFile!,
    /^\/.*ticket\.key$/,
    'resolved to an absolute path',
  );
});
