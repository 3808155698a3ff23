import { hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync, type Stats } from 'node:fs';
import type { Server as TlsServer } from 'node:tls';
import { ConfigError } from './config-error.js';

/**
 * TLS session tickets that every worker (and, with a key file, every replica) can open, so
 * that a returning client resumes its session wherever its connection lands and skips the
 * certificate signature of a full handshake. TLS 1.3 and TLS 1.2 tickets alike.
 *
 * Where the keys come from (a decision):
 * - By default the cluster primary generates them at random, keeps them in memory only, and
 *   hands them to each worker over the cluster IPC channel (a worker asks when it starts, so
 *   a restarted worker gets the keys in force, and the primary pushes each rotation). Nothing
 *   to configure, nothing on disk; a restart of the whole service (or another replica)
 *   starts with new keys, and its returning clients do one full handshake.
 * - With ARBOR_TLS_TICKET_KEY_FILE the keys are derived (HKDF-SHA256) from the operator's
 *   secret and the period number, so every replica behind the load balancer, and the
 *   service after a restart, computes the same keys with no coordination. Deriving, not
 *   generating, is what makes that possible; the price is that the file is a long-lived
 *   secret whose theft opens every ticket of every period (so it is the operator's to guard,
 *   and the default does without it).
 * Rotation: the key of period `n` (ARBOR_TLS_TICKET_ROTATION_SECONDS long) seals the tickets
 * issued during it and still opens them during period `n + 1`; tickets live one period
 * (the server's session timeout), so each lives its whole advertised lifetime whenever it was
 * issued, and no key opens anything for longer than two periods.
 */

/** One ticket key: its name (in clear at the head of every ticket), HMAC and AES-128 keys. */
export interface TicketKey {
  readonly name: Buffer;
  readonly hmac: Buffer;
  readonly aes: Buffer;
}

/** The keys in force: `current` seals new tickets; it and `accepted` open them. */
export interface TicketKeySet {
  /** The period these keys are for (wall-clock milliseconds / period length). */
  readonly period: number;
  readonly current: TicketKey;
  readonly accepted: readonly TicketKey[];
}

const NAME_BYTES = 16;
const HMAC_BYTES = 32;
// Node's ticket callback seals with AES-128-CBC (and HMAC-SHA256), as OpenSSL's own tickets.
const AES_BYTES = 16;
const KEY_BYTES = NAME_BYTES + HMAC_BYTES + AES_BYTES;
/** Below this a key file is too short to be a secret (256 bits). */
const TICKET_SECRET_MIN_BYTES = 32;
/** A key file is a secret, not a document: more than this is a wrong path. */
const TICKET_SECRET_MAX_BYTES = 4096;
const KEY_FILE = 'ARBOR_TLS_TICKET_KEY_FILE';

function split(bytes: Buffer): TicketKey {
  return {
    name: bytes.subarray(0, NAME_BYTES),
    hmac: bytes.subarray(NAME_BYTES, NAME_BYTES + HMAC_BYTES),
    aes: bytes.subarray(NAME_BYTES + HMAC_BYTES, KEY_BYTES),
  };
}

function generateTicketKey(): TicketKey {
  return split(randomBytes(KEY_BYTES));
}

/** The key of `period` under `secret`: the same in every process that holds the secret. */
function deriveTicketKey(secret: Buffer, period: number): TicketKey {
  const info = `arbor tls session ticket key, period ${period}`;
  return split(Buffer.from(hkdfSync('sha256', secret, 'arbor-tls-tickets', info, KEY_BYTES)));
}

/** Where ticket keys come from: what they are at `now` (ms). */
export interface TicketKeySource {
  at(now: number): TicketKeySet;
  readonly periodMs: number;
}

/**
 * Random keys, one per period, made when the period is first asked for. The previous
 * period's key is kept only while it is the period just before; after a longer gap (a
 * suspended machine) it is past its grace and dropped.
 */
export class GeneratedTicketKeys implements TicketKeySource {
  #set: TicketKeySet | undefined;

  constructor(readonly periodMs: number) {}

  at(now: number): TicketKeySet {
    const period = Math.floor(now / this.periodMs);
    const was = this.#set;
    // A clock that stepped back keeps the keys it has rather than reissuing a period.
    if (was && period <= was.period) return was;
    const current = generateTicketKey();
    const accepted = was && period === was.period + 1 ? [was.current] : [];
    this.#set = { period, current, accepted };
    return this.#set;
  }
}

/**
 * Keys derived from the operator's secret. The next period's key opens tickets too: a
 * replica whose clock is a little behind then resumes what a replica already in the next
 * period sealed, instead of a full handshake around every boundary.
 */
export class DerivedTicketKeys implements TicketKeySource {
  readonly #secret: Buffer;
  #set: TicketKeySet | undefined;

  constructor(
    secret: Buffer,
    readonly periodMs: number,
  ) {
    this.#secret = Buffer.from(secret);
  }

  at(now: number): TicketKeySet {
    const period = Math.floor(now / this.periodMs);
    if (this.#set?.period === period) return this.#set;
    const key = (p: number) => deriveTicketKey(this.#secret, p);
    this.#set = { period, current: key(period), accepted: [key(period - 1), key(period + 1)] };
    return this.#set;
  }
}

/**
 * Read ARBOR_TLS_TICKET_KEY_FILE: its whole content is the secret (binary or text, say
 * `openssl rand -base64 48`), at least 32 bytes. It must be a file others may not read:
 * anyone who reads it can open every ticket. The group may (a Kubernetes Secret volume with
 * `fsGroup` grants the pod's group read), so 0400, 0600 or 0440 serve, 0644 does not.
 * @throws ConfigError naming the variable and the path, never the contents.
 */
export function readTicketSecret(file: string): Buffer {
  let st: Stats;
  let bytes: Buffer;
  try {
    // Follows links: a Secret volume presents its files as links into a hidden directory.
    st = statSync(file);
    if (!st.isFile()) throw new ConfigError(`${KEY_FILE} must be a file: ${file} is not`);
    bytes = readFileSync(file);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(`${KEY_FILE} cannot be read: ${file} (${code})`);
  }
  if (process.platform !== 'win32' && (st.mode & 0o007) !== 0)
    throw new ConfigError(
      `${KEY_FILE} must not be readable by others (chmod 600, or defaultMode: 0400 on a Secret volume): ${file} is ${(st.mode & 0o777).toString(8)}`,
    );
  if (bytes.length < TICKET_SECRET_MIN_BYTES || bytes.length > TICKET_SECRET_MAX_BYTES)
    throw new ConfigError(
      `${KEY_FILE} must hold from ${TICKET_SECRET_MIN_BYTES} to ${TICKET_SECRET_MAX_BYTES} bytes of secret: ${file} holds ${bytes.length}`,
    );
  return bytes;
}

/** What crosses the cluster IPC channel (JSON): hex, so that no Buffer shape is relied on. */
export interface TicketKeyMessage {
  type: 'arbor:ticket-keys';
  period: number;
  current: string;
  accepted: string[];
}

const hex = (k: TicketKey) => Buffer.concat([k.name, k.hmac, k.aes]).toString('hex');

export function ticketKeyMessage(set: TicketKeySet): TicketKeyMessage {
  return {
    type: 'arbor:ticket-keys',
    period: set.period,
    current: hex(set.current),
    accepted: set.accepted.map(hex),
  };
}

/** The key set a {@link ticketKeyMessage} carries, or undefined for any other message. */
export function fromTicketKeyMessage(m: unknown): TicketKeySet | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const t = m as Partial<TicketKeyMessage>;
  if (t.type !== 'arbor:ticket-keys' || typeof t.current !== 'string') return undefined;
  const key = (h: unknown) => {
    const b = typeof h === 'string' ? Buffer.from(h, 'hex') : Buffer.alloc(0);
    if (b.length !== KEY_BYTES) throw new Error('a ticket key message with a malformed key');
    return split(b);
  };
  return {
    period: Number(t.period),
    current: key(t.current),
    accepted: (Array.isArray(t.accepted) ? t.accepted : []).map(key),
  };
}

/** Node's internal SecureContext, as far as the ticket callback goes (see {@link TicketKeyRing}). */
interface NativeContext {
  enableTicketKeyCallback?: () => void;
  onticketkeycallback?: (name: Buffer, iv: Buffer, encrypt: boolean) => unknown[];
}

/** Answers that make OpenSSL fall back to a full handshake need well-formed buffers too. */
const NO_HMAC = Buffer.alloc(HMAC_BYTES);
const NO_AES = Buffer.alloc(AES_BYTES);
/** The callback's answers: 1 opened, 2 opened and reissue under the current key, 0 unknown. */
const OPENED = 1;
const OPENED_RENEW = 2;
const UNKNOWN = 0;

/**
 * The keys one process serves tickets with, installed on its TLS server(s).
 *
 * Node's public `server.setTicketKeys` takes one key, which both seals and opens: a rotation
 * through it would refuse every ticket sealed a moment before, so there could be no grace
 * period. OpenSSL's ticket key callback can look the key up by name; Node wires it to its
 * SecureContext (`enableTicketKeyCallback` / `onticketkeycallback`, what Node's own tests of
 * resumption after renewal use) but does not document it. It is used when present; if a
 * future Node drops it, {@link install} falls back to `setTicketKeys` with the current key
 * (resumption still shared by every worker, no grace across a rotation) and says so, and
 * test/unit/tls-ticket-keys.test.ts fails, so the change is noticed.
 *
 * Until the first {@link set}, a random key of its own: tickets then resume in this process only.
 */
export class TicketKeyRing {
  #set: TicketKeySet = { period: Number.NaN, current: generateTicketKey(), accepted: [] };
  readonly #servers = new Set<TlsServer>();
  /** False once a server had to take the single-key fallback (see {@link install}). */
  graceful = true;

  get period(): number {
    return this.#set.period;
  }

  /** Serve `set` from the next handshake on, on every server installed. */
  set(set: TicketKeySet): void {
    this.#set = set;
    for (const s of this.#servers) if (!nativeContext(s)) s.setTicketKeys(legacyKey(set.current));
  }

  /**
   * Seal and open `server`'s tickets with this ring. Call again after every
   * `server.setSecureContext` (a certificate reload): Node makes a new context there.
   * @returns `callback` (keys by name, grace across rotations) or `single-key`.
   */
  install(server: TlsServer): 'callback' | 'single-key' {
    this.#servers.add(server);
    const ctx = nativeContext(server);
    if (!ctx) {
      this.graceful = false;
      server.setTicketKeys(legacyKey(this.#set.current));
      return 'single-key';
    }
    ctx.enableTicketKeyCallback!();
    // Runs inside OpenSSL for every ticket: it must not throw (that fails the handshake)
    // and must always answer with buffers of the right lengths (Node asserts on them).
    ctx.onticketkeycallback = (name, _iv, encrypt) => {
      const set = this.#set;
      if (encrypt) {
        const k = set.current;
        return [OPENED, k.hmac, k.aes, k.name, randomBytes(16)];
      }
      if (sameName(set.current.name, name)) return [OPENED, set.current.hmac, set.current.aes];
      for (const k of set.accepted)
        if (sameName(k.name, name)) return [OPENED_RENEW, k.hmac, k.aes];
      return [UNKNOWN, NO_HMAC, NO_AES];
    };
    return 'callback';
  }
}

function sameName(a: Buffer, b: Buffer): boolean {
  return b.length === a.length && timingSafeEqual(a, b);
}

/** `setTicketKeys`' 48 bytes: name, HMAC and AES keys of 16 each. */
function legacyKey(k: TicketKey): Buffer {
  return Buffer.concat([k.name, k.hmac.subarray(0, 16), k.aes]);
}

function nativeContext(server: TlsServer): NativeContext | undefined {
  const ctx = (server as unknown as { _sharedCreds?: { context?: NativeContext } })._sharedCreds
    ?.context;
  return typeof ctx?.enableTicketKeyCallback === 'function' ? ctx : undefined;
}

/**
 * Keep `apply` fed with `source`'s keys: now, and at every period boundary after. The timer
 * never keeps the process alive. `now` is injectable, so tests turn the clock, not the wall.
 * @returns a function that stops rotating.
 */
export function rotateTicketKeys(
  source: TicketKeySource,
  apply: (set: TicketKeySet) => void,
  now: () => number = Date.now,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const t = now();
    apply(source.at(t));
    // A little past the boundary, so that the next tick is in the next period.
    const wait = source.periodMs - (t % source.periodMs) + 10;
    timer = setTimeout(tick, wait).unref();
  };
  tick();
  return () => clearTimeout(timer);
}

/** Where the keys of a server (or cluster) come from, by its configuration. */
export function ticketKeySource(tickets: {
  rotationMs: number;
  keyFile: string | undefined;
}): TicketKeySource {
  return tickets.keyFile === undefined
    ? new GeneratedTicketKeys(tickets.rotationMs)
    : new DerivedTicketKeys(readTicketSecret(tickets.keyFile), tickets.rotationMs);
}
