import net from 'node:net';

/**
 * HTTP/1.1 over a bare TCP socket, for tests that must choose every byte and every write:
 * heads split across writes, methods and request lines no client library would send. The
 * answers are parsed here just enough to tell one from the next on a kept-alive connection.
 */

/** One answer as it came off the wire (interim 1xx answers skipped). */
export interface WireAnswer {
  status: number;
  /** Lower-cased names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  /** The body, de-chunked (never decompressed: these tests send no Accept-Encoding). */
  body: string;
  /** The server said `Connection: close` or closed after answering. */
  closed: boolean;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A connection that sends requests one at a time, in the given writes, and reads each answer. */
export class RawConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      this.wake?.();
    });
    const end = () => {
      this.ended = true;
      this.wake?.();
    };
    socket.on('end', end);
    socket.on('close', end);
    // A reset after the answer is the server closing; a reset before it shows as no answer.
    socket.on('error', end);
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host, noDelay: true }, () => {
        s.off('error', reject);
        resolve(new RawConnection(s));
      });
      s.once('error', reject);
    });
  }

  /** The server has closed (or reset) this connection. */
  get closed(): boolean {
    return this.ended || this.socket.destroyed;
  }

  /**
   * Sends `parts` as separate writes, `gapMs` apart (long enough on loopback for the server
   * to read each on its own), and reads one answer: the one to a HEAD has no body.
   * @throws Error when the connection closes before a whole answer, or after `timeoutMs`.
   */
  async exchange(
    parts: ReadonlyArray<string | Buffer>,
    opts: { head?: boolean; gapMs?: number; timeoutMs?: number } = {},
  ): Promise<WireAnswer> {
    for (const [i, p] of parts.entries()) {
      if (i > 0) await pause(opts.gapMs ?? 5);
      if (this.closed) break;
      this.socket.write(p);
    }
    const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
    for (;;) {
      const a = this.parse(opts.head === true);
      if (a !== undefined && a.status >= 200) return a;
      if (a !== undefined) continue;
      if (this.ended) {
        const seen = this.buffered.toString('latin1').slice(0, 200);
        throw new Error(`the connection closed before a whole answer (${JSON.stringify(seen)})`);
      }
      if (Date.now() > deadline) throw new Error('no answer in time');
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 50);
      });
      this.wake = undefined;
    }
  }

  close(): void {
    this.socket.destroy();
  }

  /** One whole answer off the front of what was read, or undefined while it is incomplete. */
  private parse(head: boolean): WireAnswer | undefined {
    const text = this.buffered.toString('latin1');
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1] ?? NaN);
    if (!Number.isInteger(status)) throw new Error(`not an HTTP answer: ${statusLine}`);
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const rest = this.buffered.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
    const noBody = head || status < 200 || status === 204 || status === 304;
    const read = noBody ? { body: Buffer.alloc(0), rest } : this.bodyOf(headers, rest);
    if (read === undefined) return undefined;
    const { body } = read;
    this.buffered = read.rest;
    const closed =
      /close/i.test(headers.connection ?? '') || (this.ended && read.rest.length === 0);
    return { status, headers, body: body.toString('utf8'), closed };
  }

  /** The body after a head, by its length, its chunks or the close; undefined while partial. */
  private bodyOf(
    headers: Record<string, string>,
    rest: Buffer,
  ): { body: Buffer; rest: Buffer } | undefined {
    if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      return rest.length < n ? undefined : { body: rest.subarray(0, n), rest: rest.subarray(n) };
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const chunks: Buffer[] = [];
      let at = 0;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = parseInt(rest.toString('latin1', at, lineEnd), 16);
        if (rest.length < lineEnd + 2 + size + 2) return undefined;
        chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) return { body: Buffer.concat(chunks), rest: rest.subarray(at) };
      }
    }
    // Neither: the body runs to the close.
    return this.ended ? { body: rest, rest: Buffer.alloc(0) } : undefined;
  }
}

/** Sends `parts` on a fresh connection and reads one answer; the connection is then closed. */
export async function rawExchange(
  port: number,
  parts: ReadonlyArray<string | Buffer>,
  opts: { head?: boolean; gapMs?: number; timeoutMs?: number } = {},
): Promise<WireAnswer> {
  const c = await RawConnection.open(port);
  try {
    return await c.exchange(parts, opts);
  } finally {
    c.close();
  }
}

/**
 * What is wrong with an error answer's body, if anything: it must be a google.rpc.Status
 * (`{code, message, details}`, each detail typed), sent as JSON.
 */
export function statusBodyProblem(a: WireAnswer): string | undefined {
  if (!/^application\/json/.test(a.headers['content-type'] ?? ''))
    return `content-type ${a.headers['content-type']}`;
  try {
    const b = JSON.parse(a.body) as { code?: unknown; message?: unknown; details?: unknown };
    const ok =
      Number.isInteger(b.code) &&
      (b.code as number) > 0 &&
      typeof b.message === 'string' &&
      b.message !== '' &&
      Array.isArray(b.details) &&
      (b.details as Array<{ '@type'?: unknown }>).every(
        (d) =>
          typeof d['@type'] === 'string' &&
          d['@type'].startsWith('type.googleapis.com/google.rpc.'),
      );
    return ok ? undefined : `not a google.rpc.Status: ${a.body.slice(0, 200)}`;
  } catch {
    return `not JSON (${a.body.length} bytes): ${JSON.stringify(a.body.slice(0, 200))}`;
  }
}
