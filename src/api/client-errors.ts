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
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const why = tooLarge ? 'the request head is too large' : 'the request is not valid HTTP';
    const body = JSON.stringify(
      new RpcError(Code.INVALID_ARGUMENT, `Invalid argument: ${why}`).toStatus(),
    );
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        'Content-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
