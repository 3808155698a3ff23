import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { DescMethod } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { compressedWithoutEncoding, parseMessage } from './parse-errors.js';

/**
 * Why: Connect answers a request message that does not parse, or one flagged compressed
 * on a call that named no encoding, with INTERNAL, and reads a unary call's second message
 * whole (up to readMaxBytes) before refusing it. The RPC adapter runs every body through
 * this on its way to Connect, which sees the same bytes, so that those are the caller's
 * errors (INVALID_ARGUMENT), and a call that takes one message is refused as soon as the
 * prefix of a second arrives, whatever length that claims: a frame never takes more than
 * its declared length. Everything else (sizes past readMaxBytes, incomplete frames, JSON)
 * is left to Connect, which already answers it right.
 */
export class BodyCheck {
  private readonly chunks: Buffer[] = [];
  private held = 0;
  private messages = 0;
  /** Connect refuses this body on its own (an oversized frame): nothing more to check. */
  private done = false;

  private constructor(
    private readonly method: DescMethod,
    /** Frames (gRPC, gRPC-Web, Connect streaming), or one raw message (Connect unary). */
    private readonly enveloped: boolean,
    private readonly binary: boolean,
    private readonly encoding: string | undefined,
    private readonly readMaxBytes: number,
    /** The flag that ends a stream in this protocol (gRPC-Web 0x80, Connect 0x02); gRPC has none. */
    private readonly endFlag: number,
  ) {}

  /** The check for a POST of `contentType` to `method`; undefined for what it does not know. */
  static of(
    method: DescMethod,
    contentType: string | undefined,
    header: (name: string) => string | undefined,
    readMaxBytes: number,
  ): BodyCheck | undefined {
    const m = CONTENT_TYPE.exec(contentType ?? '');
    if (m === null) return undefined;
    const enveloped = m[1] !== undefined;
    const binary = enveloped ? m[2]?.toLowerCase() !== '+json' : m[3]?.toLowerCase() === 'proto';
    const protocol = m[1]?.toLowerCase();
    const encoding = !enveloped
      ? header('content-encoding')
      : protocol === 'connect'
        ? header('connect-content-encoding')
        : header('grpc-encoding');
    const endFlag = protocol === 'grpc-web' ? 0x80 : protocol === 'connect' ? 0x02 : 0;
    return new BodyCheck(method, enveloped, binary, encoding, readMaxBytes, endFlag);
  }

  /** @throws ConnectError for what Connect would answer wrongly (see the class). */
  push(chunk: Buffer): void {
    if (this.done) return;
    this.chunks.push(chunk);
    this.held += chunk.length;
    if (this.enveloped) this.frames();
  }

  /** The body has ended. @throws ConnectError as push does, for a raw message. */
  end(): void {
    if (this.done || this.enveloped || !this.binary) return;
    if (this.held === 0 || this.held > this.readMaxBytes) return;
    this.check(this.encoding !== undefined && this.encoding !== 'identity', this.take(this.held));
  }

  private frames(): void {
    const single =
      this.method.methodKind === 'unary' || this.method.methodKind === 'server_streaming';
    while (!this.done && this.held >= 5) {
      if (single && this.messages > 0)
        throw new ConnectError(
          `protocol error: received extra input message for ${this.method.methodKind === 'unary' ? 'unary' : 'server-streaming'} method`,
          Code.Unimplemented,
        );
      const head = this.take(5, false);
      const flags = head[0]!;
      const len = head.readUInt32BE(1);
      if (len > this.readMaxBytes) {
        this.done = true;
        return;
      }
      if (this.held < 5 + len) return;
      const frame = this.take(5 + len);
      this.messages++;
      // An end-of-stream frame is Connect's to refuse in a request; any other is a message.
      if ((flags & this.endFlag) === 0) this.check((flags & 1) === 1, frame.subarray(5));
    }
  }

  private check(compressed: boolean, payload: Buffer): void {
    if (!this.binary) return;
    if (compressed) {
      if (this.encoding === undefined || this.encoding === 'identity') {
        if (this.enveloped) throw compressedWithoutEncoding();
      } else {
        const plain = this.decompress(payload);
        if (plain !== undefined) parseMessage(this.method, plain);
        return;
      }
    }
    parseMessage(this.method, payload);
  }

  /** Left to Connect (undefined): an encoding it does not know, or past readMaxBytes. */
  private decompress(payload: Buffer): Buffer | undefined {
    const opts = { maxOutputLength: Math.max(1, this.readMaxBytes) };
    try {
      if (this.encoding === 'gzip') return gunzipSync(payload, opts);
      if (this.encoding === 'br') return brotliDecompressSync(payload, opts);
      return undefined;
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
      throw new ConnectError('decompression failed', Code.InvalidArgument);
    }
  }

  /** The first `n` bytes held, as one buffer; `consume` drops them. */
  private take(n: number, consume = true): Buffer {
    if (this.chunks[0]!.length < n) {
      const all = Buffer.concat(this.chunks, this.held);
      this.chunks.length = 0;
      this.chunks.push(all);
    }
    const first = this.chunks[0]!;
    if (!consume) return first.subarray(0, n);
    this.held -= n;
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    return first.subarray(0, n);
  }
}

/** gRPC, gRPC-Web and Connect streaming frame their messages; Connect unary does not. */
const CONTENT_TYPE =
  /^application\/(?:(grpc|grpc-web|connect)(\+proto|\+json)?|(proto|json))\s*(?:;|$)/i;
