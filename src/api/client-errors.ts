import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Code } from '../core/rpc-code.js';
import { RpcError } from '../core/rpc-error.js';

/**
 * Requests Node's HTTP parser refuses before Koa sees them (a malformed request line, an
 * invalid method, a head past the size limit) would be answered by Node with a bare 400
 * and no body. Answer them like every other failure: a google.rpc.Status, 400, or 431 for
 * an oversized head. Nothing of the request is echoed.
 */
export function answerClientErrors(server: Server): void {
  server.on(
    'clientError',
    (err: Error & { code?: string; rawPacket?: unknown }, socket: Duplex) => {
      if (!socket.writable || err.code === 'ECONNRESET') {
        socket.destroy();
        return;
      }
      const { status, reason, error } = answerTo(err.code);
      const body = JSON.stringify(error.toStatus());
      // A HEAD answer has no body (RFC 9110 §9.3.2), this one included. The method is known
      // only from the bytes Node held when it gave up: unless they begin with another
      // method, no body is sent.
      const withBody = methodOf(err.rawPacket) !== undefined;
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\n` +
          'Content-Type: application/json\r\n' +
          `Content-Length: ${withBody ? Buffer.byteLength(body) : 0}\r\n` +
          'Connection: close\r\n\r\n' +
          (withBody ? body : ''),
        () => socket.destroy(),
      );
      // end() only half-closes: a peer that ignores the FIN and keeps trickling bytes would
      // hold the socket for as long as it likes, and Node checks a message's deadline once
      // (the timed-out parser leaves its list of active connections), so nothing else would
      // close it. Close for good once the answer is out, or after a moment if the peer does
      // not even read it.
      setTimeout(() => socket.destroy(), ANSWER_GRACE_MS).unref();
    },
  );
}

/** How long an answered client error may take to leave before its connection is cut. */
const ANSWER_GRACE_MS = 1_000;

/** The method the packet's request line begins with, unless it is HEAD or none is seen. */
function methodOf(packet: unknown): string | undefined {
  if (!Buffer.isBuffer(packet)) return undefined;
  const m = /^([A-Z]{1,20}) /.exec(packet.toString('latin1', 0, 21));
  return m === null || m[1] === 'HEAD' ? undefined : m[1];
}

/** An oversized head is 431; one that did not arrive in time (headersTimeout) 408; else 400. */
function answerTo(code: string | undefined): { status: number; reason: string; error: RpcError } {
  if (code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      error: new RpcError(Code.INVALID_ARGUMENT, 'Invalid argument: the request head is too large'),
    };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      status: 408,
      reason: 'Request Timeout',
      error: new RpcError(
        Code.DEADLINE_EXCEEDED,
        'Deadline exceeded: the request did not arrive in time',
      ),
    };
  return {
    status: 400,
    reason: 'Bad Request',
    error: new RpcError(Code.INVALID_ARGUMENT, 'Invalid argument: the request is not valid HTTP'),
  };
}
