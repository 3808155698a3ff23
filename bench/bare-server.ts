/**
 * The measured ceiling of a gRPC pair: a bare `node:http2` server (h2c) that
 * answers every call with the very gRPC answer Arbor gave (HEADERS, the one message frame,
 * `grpc-status: 0` trailers), and a bare `node:http` server that answers every request
 * with the very REST answer (the same body and headers). No routing, no authentication, no
 * database: what Node's HTTP/1.1 and HTTP/2 cost for these bytes, loaded by the same
 * generator as Arbor.
 *
 * Env: PORT (HTTP/1.1), H2_PORT (HTTP/2), BARE_ANSWERS (a JSON file: `{rest: {headers,
 * body (base64)}, grpc: {frame (base64)}}`, written by bench/grpc-cases.ts).
 */
import http from 'node:http';
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';

interface Answers {
  rest: { headers: Record<string, string>; body: string };
  grpc: { frame: string };
}

const answers = JSON.parse(readFileSync(process.env.BARE_ANSWERS!, 'utf8')) as Answers;
const restBody = Buffer.from(answers.rest.body, 'base64');
const restHeaders = { ...answers.rest.headers, 'content-length': String(restBody.length) };
const frame = Buffer.from(answers.grpc.frame, 'base64');

http
  .createServer((req, res) => {
    if (req.url === '/healthz') {
      res.end('ok');
      return;
    }
    req.resume();
    res.writeHead(200, restHeaders);
    res.end(restBody);
  })
  .listen(Number(process.env.PORT), '127.0.0.1');

// Arbor's unary fast path, without Arbor: read the request to its end, then answer.
const h2 = http2.createServer();
h2.on('stream', (stream) => {
  stream.on('error', () => undefined);
  stream.on('data', () => undefined);
  stream.once('end', () => {
    if (stream.destroyed) return;
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc+proto' },
      { waitForTrailers: true },
    );
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame);
  });
});
h2.listen(Number(process.env.H2_PORT), '127.0.0.1');
