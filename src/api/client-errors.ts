import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Code } from '../core/rpc-code.js';
import { RpcError } from '../core/rpc-error.js';

/**
 * Every answer Node's HTTP/1.1 server would otherwise write by itself, with no body, leaves
 * as a google.rpc.Status like every other failure:
 * - a request its parser refuses (a malformed request line, a method it does not know, a
 *   head past the size limit, a head that did not arrive in time): 400, 431 or 408;
 * - an HTTP/1.1 request without a Host header (RFC 9112 §3.2): 400;
 * - an `Expect` other than `100-continue`: 417;
 * - CONNECT, which Node would answer by closing the connection without a word: 405.
 * Nothing of the request is echoed. Call it once the server has its request handler.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', answerParseError);
  // Node answers these itself, bodiless, unless told otherwise.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    // The body the client holds back may still come: it must not be read as a request.
    res.shouldKeepAlive = false;
    answer(res, 417, EXPECTATION_FAILED);
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) =>
    answerRaw(socket, 405, 'Method Not Allowed', CONNECT_REFUSED, true),
  );
  // Node refuses a hostless HTTP/1.1 request with a bare 400 before any handler sees it:
  // the check is made here instead, in front of the handlers the server already has.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  const handlers = server.listeners('request') as Array<
    (req: IncomingMessage, res: ServerResponse) => void
  >;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      res.shouldKeepAlive = false;
      return answer(res, 400, NO_HOST);
    }
    for (const h of handlers) h.call(server, req, res);
  });
}

const NO_HOST = new RpcError(
  Code.INVALID_ARGUMENT,
  'Invalid argument: an HTTP/1.1 request must name its Host',
);
const EXPECTATION_FAILED = new RpcError(
  Code.FAILED_PRECONDITION,
  'Precondition failed: the only expectation this server meets is 100-continue',
);
const CONNECT_REFUSED = new RpcError(
  Code.UNIMPLEMENTED,
  'Unimplemented: CONNECT is not supported: this is not a proxy',
);

function answer(res: ServerResponse, status: number, error: RpcError): void {
  const body = JSON.stringify(error.toStatus());
  // A HEAD answer loses its body here by itself (Node knows the method by now).
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** How long an answered client error may take to leave before its connection is cut. */
const ANSWER_GRACE_MS = 1_000;

function answerParseError(err: Error & { code?: string; rawPacket?: unknown }, socket: Duplex) {
  // Node's own rule: never write over an answer already on its way (its head sent).
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || err.code === 'ECONNRESET' || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const { status, reason, error } = answerTo(err.code);
  // A HEAD answer has no body (RFC 9110 §9.3.2), this one included. Node gives only the
  // bytes it was parsing when it gave up, which begin with the method only if the request
  // began in them: a head split across writes (or one that timed out) shows none. The body
  // is left out only when the method is seen to be HEAD; otherwise it is sent, and on the
  // rare HEAD split across writes it is bytes the client reads past before the close.
  answerRaw(socket, status, reason, error, !isHead(err.rawPacket));
}

/** Writes one whole answer on a socket no HTTP response owns, then closes it for good. */
function answerRaw(
  socket: Duplex,
  status: number,
  reason: string,
  error: RpcError,
  withBody: boolean,
): void {
  const body = withBody ? JSON.stringify(error.toStatus()) : '';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
    () => socket.destroy(),
  );
  // end() only half-closes: a peer that ignores the FIN and keeps trickling bytes would
  // hold the socket for as long as it likes, and Node checks a message's deadline once
  // (the timed-out parser leaves its list of active connections), so nothing else would
  // close it. Close for good once the answer is out, or after a moment if the peer does
  // not even read it.
  setTimeout(() => socket.destroy(), ANSWER_GRACE_MS).unref();
}

/** Whether the bytes Node was parsing begin a HEAD request. */
function isHead(packet: unknown): boolean {
  return Buffer.isBuffer(packet) && packet.toString('latin1', 0, 5) === 'HEAD ';
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
